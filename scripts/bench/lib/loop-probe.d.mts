// Types of loop-probe.mjs (plain JavaScript, loaded by the reference server without the TypeScript loader).
export interface GcKind {
  count: number
  ms: number
  maxMs: number
}
export interface LoopStats {
  gc: { minor: GcKind; major: GcKind; incremental: GcKind; weak: GcKind }
  /** How late a 1 ms timer fired (ms): p50, p99 and the longest. */
  loopDelay: { p50: number; p99: number; max: number }
}
export function startLoopProbe(): { take(): LoopStats; stop(): void }
export function schedstat(pid: number): { runMs: number; waitMs: number; slices: number } | undefined
