// @ts-check
// The load generator's own process (started once by harness.ts and kept for the whole run): for
// each line of JSON autocannon options on stdin, runs that round and writes its counts as one JSON
// line to stdout. Kept out of the measured server's process so that the two do not share an event
// loop; plain JavaScript so that it starts without the TypeScript loader.
import autocannon from 'autocannon'
import { createInterface } from 'node:readline'

/** @param {any} opts */
async function round(opts) {
  const cpuBefore = process.cpuUsage()
  const r = await autocannon({ ...opts, workers: undefined })
  const cpu = process.cpuUsage(cpuBefore)
  // Every answer outside 2xx by status, so that a report can say what failed, not only how many.
  /** @type {Record<string, number>} */
  const statuses = {}
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) if (!code.startsWith('2')) statuses[code] = s.count ?? 0
  return {
    ok: r['2xx'],
    seconds: r.duration,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statuses,
    cpuMs: (cpu.user + cpu.system) / 1000,
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue
  let answer
  try {
    answer = await round(JSON.parse(line))
  } catch (err) {
    answer = { error: String(err) }
  }
  process.stdout.write(JSON.stringify(answer) + '\n')
}
