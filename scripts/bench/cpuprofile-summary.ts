// Prints a V8 CPU profile (`node --cpu-prof` writes one per process on exit) summarised by self
// time per module and per function (lib/cpu-profile-summary.ts), optionally divided by a count of
// requests (µs per request). docs/benchmarks.md, "Feature flags: where an evaluate request's CPU
// goes", keeps the command and what it said.
//
//   npx tsx scripts/bench/cpuprofile-summary.ts PROFILE.cpuprofile [--requests N] [--top 25]
import path from 'node:path'
import { parseArgs } from 'node:util'
import { summarise } from './lib/cpu-profile-summary.ts'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { requests: { type: 'string' }, top: { type: 'string', default: '25' } } })
const file = positionals[0]
if (!file) throw new Error('usage: cpuprofile-summary.ts PROFILE.cpuprofile [--requests N] [--top 25]')
const s = summarise(file)
const requests = values.requests ? Number(values.requests) : 0
const top = Number(values.top)
const busyUs = s.busyMs * 1000
const line = (name: string, ms: number) =>
  `${((100 * ms) / s.busyMs).toFixed(1).padStart(5)} %  ${requests ? `${((ms * 1000) / requests).toFixed(2).padStart(7)} µs/req  ` : ''}${name}`
console.log(
  `profile ${path.basename(file)}: busy ${(s.busyMs / 1000).toFixed(2)} s, idle ${(s.idleMs / 1000).toFixed(2)} s` +
    (requests ? `, ${requests} requests: ${(busyUs / requests).toFixed(1)} µs of this thread per request` : ''),
)
console.log('\nself time by module:')
for (const [m, ms] of s.byModule.slice(0, top)) console.log(line(m, ms))
console.log('\nself time by function:')
for (const [f, ms] of s.byFunction.slice(0, top)) console.log(line(f, ms))
