// Summarises a V8 CPU profile (`node --cpu-prof` writes one per process on exit) by self time:
// per function and per module (a file of ours, a package of node_modules, or Node's own code),
// optionally divided by a count of requests (µs per request). docs/benchmarks.md, "Feature flags:
// where an evaluate request's CPU goes", keeps the command and what it said.
//
//   npx tsx scripts/bench/cpuprofile-summary.ts PROFILE.cpuprofile [--requests N] [--top 25]
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'

interface CallFrame {
  functionName: string
  url: string
  lineNumber: number
}
interface ProfileNode {
  id: number
  callFrame: CallFrame
  children?: number[]
}
interface Profile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

const ROOT = path.resolve(import.meta.dirname, '../..')

/** The module a frame belongs to: `pkg` for node_modules, a path of ours, `node:` internals, or V8's own entries. */
export function moduleOf(url: string): string {
  if (url === '') return '(V8: gc, idle, program, native)'
  if (url.startsWith('node:')) return 'node: internals'
  const file = url.startsWith('file://') ? new URL(url).pathname : url
  const nm = file.lastIndexOf('/node_modules/')
  if (nm >= 0) {
    const rest = file.slice(nm + '/node_modules/'.length).split('/')
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!
  }
  return path.relative(ROOT, file)
}

/** Self time (µs) per node id: each sample's delta goes to the node it landed in. */
export function selfTimes(p: Profile): Map<number, number> {
  const self = new Map<number, number>()
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0))
  return self
}

function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { requests: { type: 'string' }, top: { type: 'string', default: '25' } } })
  const file = positionals[0]
  if (!file) throw new Error('usage: cpuprofile-summary.ts PROFILE.cpuprofile [--requests N] [--top 25]')
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile
  const self = selfTimes(p)
  // The profiler's own work (node:inspector serialising the profile when it is stopped) is no
  // part of what was measured: nodes under an inspector call are left out.
  const parent = new Map<number, number>()
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const byId = new Map(p.nodes.map((n) => [n.id, n]))
  const underInspector = (id: number): boolean => {
    for (let q: number | undefined = id; q !== undefined; q = parent.get(q)) if (byId.get(q)!.callFrame.url === 'node:inspector') return true
    return false
  }
  const byFunction = new Map<string, number>()
  const byModule = new Map<string, number>()
  let total = 0
  let idle = 0
  for (const n of p.nodes) {
    const us = self.get(n.id) ?? 0
    if (us === 0 || underInspector(n.id)) continue
    const { functionName, url, lineNumber } = n.callFrame
    if (functionName === '(idle)') {
      idle += us
      continue
    }
    total += us
    const mod = moduleOf(url)
    const fn = `${functionName || '(anonymous)'} ${url ? `${mod}:${lineNumber + 1}` : ''}`.trim()
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us)
    byModule.set(mod, (byModule.get(mod) ?? 0) + us)
  }
  const requests = values.requests ? Number(values.requests) : 0
  const top = Number(values.top)
  const line = (name: string, us: number) =>
    `${((100 * us) / total).toFixed(1).padStart(5)} %  ${requests ? `${(us / requests).toFixed(2).padStart(7)} µs/req  ` : ''}${name}`
  console.log(`profile ${path.basename(file)}: ${((p.endTime - p.startTime) / 1e6).toFixed(1)} s, busy ${(total / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s` +
    (requests ? `, ${requests} requests: ${(total / requests).toFixed(1)} µs of this thread per request` : ''))
  console.log('\nself time by module:')
  for (const [m, us] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(line(m, us))
  console.log('\nself time by function:')
  for (const [f, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(line(f, us))
}

if (process.argv[1] === import.meta.filename) main()
