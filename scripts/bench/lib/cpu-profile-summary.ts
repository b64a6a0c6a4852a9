// Summarises V8 CPU profiles (node --cpu-prof) by self time: per module (npm package, our source
// file, node: internals, GC, idle) and per function, counting only the samples taken inside a
// window of the monotonic clock (the same clock as process.hrtime), so that a process's start and
// warm-up do not count. A render thread blocked in piscina's Atomics.wait between tasks counts as
// idle. The profiler's own work (node:inspector serialising a profile taken in process, as
// flags-profile.ts does) is left out. Line:column are those of the code as run (tsx's output), not
// of the .ts source. Used by bench:invoice-profile and cpuprofile-summary.ts (docs/benchmarks.md).
import { readFileSync } from 'node:fs'

interface Node {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  children?: number[]
}
interface Profile {
  nodes: Node[]
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface SelfTime {
  /** ms of samples in the window, idle excluded. */
  busyMs: number
  idleMs: number
  byModule: Array<[string, number]>
  byFunction: Array<[string, number]>
  /** Our own functions (src/, jobs/) with the time of everything they called (inclusive). */
  ours: Array<[string, number]>
}

/** Where a script belongs: "pdfmake", "src/invoice/pdf/document.ts", "node:internal", "(garbage collector)". */
export function moduleOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)'
  const nm = url.lastIndexOf('node_modules/')
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/')
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  if (url.startsWith('node:')) return url.startsWith('node:internal') ? 'node:internal' : url
  const src = /\/((?:src|jobs|workers|scripts)\/.*)$/.exec(url)
  return src ? src[1]! : url
}

/** Self time by module and by function of one profile, inside [fromUs, toUs] of the monotonic clock. */
export function summarise(file: string, fromUs = -Infinity, toUs = Infinity): SelfTime {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const inspector = new Map<number, boolean>()
  const underInspector = (id: number): boolean => {
    let v = inspector.get(id)
    if (v === undefined) {
      const up = parent.get(id)
      v = byId.get(id)!.callFrame.url === 'node:inspector' || (up !== undefined && underInspector(up))
      inspector.set(id, v)
    }
    return v
  }
  const selfUs = new Map<number, number>()
  let t = p.startTime
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!
    // A sample's time is the interval up to the next one.
    const dt = p.timeDeltas[i + 1] ?? 0
    if (t < fromUs || t > toUs || underInspector(p.samples[i]!)) continue
    selfUs.set(p.samples[i]!, (selfUs.get(p.samples[i]!) ?? 0) + dt)
  }
  const mods = new Map<string, number>()
  const fns = new Map<string, number>()
  let idle = 0
  let busy = 0
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber, columnNumber } = byId.get(id)!.callFrame
    // piscina's render threads block in Atomics.wait between tasks: sampled as running, but idle.
    if (functionName === '(idle)' || functionName === 'atomicsWaitLoop') {
      idle += us
      continue
    }
    busy += us
    const mod = moduleOf(url, functionName)
    mods.set(mod, (mods.get(mod) ?? 0) + us)
    const fn = `${functionName || '(anonymous)'} ${mod}${url ? `:${lineNumber + 1}:${columnNumber + 1}` : ''}`
    fns.set(fn, (fns.get(fn) ?? 0) + us)
  }
  // Inclusive: a sample counts once for each of our functions on its stack (recursion once).
  const incl = new Map<string, number>()
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber, columnNumber } = byId.get(at)!.callFrame
      if (functionName === 'atomicsWaitLoop') break
      const mod = moduleOf(url, functionName)
      if (!/^(src|jobs)\//.test(mod)) continue
      const key = `${functionName || '(anonymous)'} ${mod}:${lineNumber + 1}:${columnNumber + 1}`
      if (!seen.has(key)) incl.set(key, (incl.get(key) ?? 0) + us)
      seen.add(key)
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, us / 1000] as [string, number])
  return { busyMs: busy / 1000, idleMs: idle / 1000, byModule: sorted(mods), byFunction: sorted(fns), ours: sorted(incl) }
}
