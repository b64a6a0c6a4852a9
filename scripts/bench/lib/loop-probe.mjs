// @ts-check
// What a server process's event loop waited on during a round, for the latency benchmarks
// (docs/benchmarks.md, "Feature flags: where the p99 comes from"): garbage-collection pauses by
// kind, the event-loop delay (how late a 1 ms timer fired: whatever held the loop, our own work,
// a GC or a core taken by another process), and from /proc the main thread's CPU time and the time
// it stood runnable but waiting for a core (schedstat). Plain JavaScript so that the reference
// server (reference-server.mjs) loads it without the TypeScript loader.
import { readFileSync } from 'node:fs'
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'

/** @typedef {{ count: number, ms: number, maxMs: number }} GcKind */
/**
 * @typedef {{
 *   gc: { minor: GcKind, major: GcKind, incremental: GcKind, weak: GcKind },
 *   loopDelay: { p50: number, p99: number, max: number },
 * }} LoopStats
 */

/** @returns {GcKind} */
const kind = () => ({ count: 0, ms: 0, maxMs: 0 })

/** Starts observing this process; take() returns what was seen since the last take() (or the start). */
export function startLoopProbe() {
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  let gc = { minor: kind(), major: kind(), incremental: kind(), weak: kind() }
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const k = /** @type {{ kind?: number } | undefined} */ (e.detail)?.kind
      const g =
        k === constants.NODE_PERFORMANCE_GC_MINOR ? gc.minor : k === constants.NODE_PERFORMANCE_GC_MAJOR ? gc.major : k === constants.NODE_PERFORMANCE_GC_INCREMENTAL ? gc.incremental : gc.weak
      g.count++
      g.ms += e.duration
      if (e.duration > g.maxMs) g.maxMs = e.duration
    }
  })
  observer.observe({ entryTypes: ['gc'] })
  return {
    /** @returns {LoopStats} */
    take() {
      const ms = (/** @type {number} */ ns) => Math.round(ns / 1e4) / 100
      const stats = { gc, loopDelay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) } }
      gc = { minor: kind(), major: kind(), incremental: kind(), weak: kind() }
      delay.reset()
      return stats
    },
    stop() {
      delay.disable()
      observer.disconnect()
    },
  }
}

/**
 * The main thread of process `pid` from /proc/<pid>/schedstat: CPU time, time spent runnable but
 * waiting for a core, and the number of times it was given a core. Undefined where /proc has no
 * schedstat (not Linux, or a kernel without schedstats).
 * @param {number} pid
 * @returns {{ runMs: number, waitMs: number, slices: number } | undefined}
 */
export function schedstat(pid) {
  try {
    const [run, wait, slices] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number)
    return { runMs: (run ?? 0) / 1e6, waitMs: (wait ?? 0) / 1e6, slices: slices ?? 0 }
  } catch {
    return undefined
  }
}
