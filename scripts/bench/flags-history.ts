// Audit history and flag-change webhooks benchmark. In one run, on this machine:
//  1. the reference: GET /api/v1/projects/{id}/flags/{key} (the same management stack, no write);
//  2. PUT of that flag, which now also writes its history entry (pending, then committed) and
//     enqueues the webhook dispatch through the outbox: mean latency per block of updates as one
//     project's history grows, the ratio of the last block to the first (entries are spread over
//     the slots of the partitioned collection by id; on the embedded engine a write costs more as
//     its collection grows), the ratio of PUT to the reference, and the time of a history page;
//  3. change → signed event at a local receiver (one in-process worker): p50 and p99.
// 20 GET/PUT pairs first warm up (not counted); a failed request or an event that never comes is
// counted and reported, never the end of the run.
// Appends its results to docs/benchmarks.md (replacing its own earlier section).
//
//   npm run bench:flags-history [-- --updates 1500 --events 100 --no-write]
//
// Uses REDIS_URL / MONGO_URL when set, else starts the embedded Redis and MongoDB engine.
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { flagsService } from '../../src/flags/service.ts'
import { flagsJobContracts } from '../../src/flags/job-contracts.ts'
import { listen } from '../../src/serve.ts'
import { setPlan, findAccountByKey } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { ALL_QUEUES } from '../../src/job-contracts.ts'
import { startWorkers } from '../../workers/main.ts'
import { writeBenchSection } from './lib/report.ts'
import { runBench } from './lib/run.ts'

const { values } = parseArgs({ options: { updates: { type: 'string', default: '1500' }, events: { type: 'string', default: '100' }, 'no-write': { type: 'boolean', default: false } } })
const UPDATES = Number(values.updates)
const EVENTS = Number(values.events)
const BLOCKS = 6
const WARMUP = 20

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const ms = (x: number) => x.toFixed(1)

/** Failed requests by status ("errors": no answer): counted and left out of the times, never the end of the run. */
const failures: Record<string, number> = {}
const failedCount = () => Object.values(failures).reduce((a, b) => a + b, 0)

async function timed(fn: () => Promise<Response>): Promise<number | null> {
  const t0 = performance.now()
  const kind = await fn().then(
    async (r) => (await r.arrayBuffer(), r.ok ? null : String(r.status)),
    () => 'errors',
  )
  if (kind) failures[kind] = (failures[kind] ?? 0) + 1
  return kind ? null : performance.now() - t0
}
const push = (xs: number[], x: number | null) => void (x !== null && xs.push(x))

async function main() {
  const stops: Array<() => Promise<void>> = []
  const redisUrl = process.env.REDIS_URL ?? (await benchRedis().then((r) => (stops.push(() => r.child.stop()), r.url)))
  const mongoUrl = process.env.MONGO_URL ?? (await benchMongo().then((m) => (stops.push(() => m.child.stop()), m.url)))
  try {
    const id = Date.now()
    const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: `bench_fh_${id}`, QUEUE_PREFIX: `bench_fh_${id}` })
    const platform = await createPlatform({ config, redisUrl: redisUrl!, mongoUrl: mongoUrl!, indexes: ALL_INDEXES, queues: ALL_QUEUES })
    const server = await listen(platform, flagsService, await benchPort())
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
    const signup = await (await fetch(`${base}/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: `bench${id}@example.com` }) })).json()
    await setPlan(platform.db, (await findAccountByKey(platform.db, 'flags', signup.api_key))!._id, 'business')
    const project = `${base}/projects/${signup.project.id}`
    const headers = { authorization: `Bearer ${signup.api_key}`, 'content-type': 'application/json' }
    const rules = [{ conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT', 'CH'] }], value: 'true' }]
    await fetch(`${project}/flags`, { method: 'POST', headers, body: JSON.stringify({ key: 'bench', enabled: true, rules }) })

    // Warm-up (not counted, and its entries are in the history before the first block): JIT,
    // connections, the slots' first writes.
    for (let i = 0; i < WARMUP; i++) {
      await timed(() => fetch(`${project}/flags/bench`, { headers }))
      await timed(() => fetch(`${project}/flags/bench`, { method: 'PUT', headers, body: JSON.stringify({ default_value: `w${i}` }) }))
    }
    const loadBefore = os.loadavg()[0]!
    // 1 + 2: GET (reference) and PUT alternate, so that both see the same machine.
    const size = Math.floor(UPDATES / BLOCKS)
    const putBlocks: number[][] = Array.from({ length: BLOCKS }, () => [])
    const getBlocks: number[][] = Array.from({ length: BLOCKS }, () => [])
    const blockLoads: number[] = []
    for (let i = 0; i < UPDATES; i++) {
      const b = Math.min(BLOCKS - 1, Math.floor(i / size))
      if (i % size === 0 && blockLoads.length < BLOCKS) blockLoads.push(os.loadavg()[0]!)
      push(getBlocks[b]!, await timed(() => fetch(`${project}/flags/bench`, { headers })))
      push(putBlocks[b]!, await timed(() => fetch(`${project}/flags/bench`, { method: 'PUT', headers, body: JSON.stringify({ default_value: `v${i}` }) })))
    }
    const puts = putBlocks.flat()
    const gets = getBlocks.flat()
    const blocks = Array.from({ length: BLOCKS }, (_, b) => ({ from: b * size, put: mean(putBlocks[b]!), get: mean(getBlocks[b]!), load: blockLoads[b]! }))
    for (const b of blocks) console.log(`history ${b.from}–${b.from + size}: PUT ${ms(b.put)} ms, GET ${ms(b.get)} ms`)

    // A page of history asks every slot of the partitioned collection and merges the answers.
    const pages: number[] = []
    const pageRefs: number[] = []
    for (let i = 0; i < 20; i++) {
      push(pageRefs, await timed(() => fetch(`${project}/flags/bench`, { headers })))
      push(pages, await timed(() => fetch(`${project}/flags/bench/history?limit=50`, { headers })))
    }
    console.log(`history page (50 entries of ${UPDATES}): ${ms(mean(pages))} ms, GET flag ${ms(mean(pageRefs))} ms`)

    // 3: change → event at a receiver, one change at a time.
    const workers = await startWorkers(platform, { queues: flagsJobContracts.map((c) => c.queue) })
    let onEvent: (() => void) | null = null
    const rx = http.createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.end()
        onEvent?.()
      })
    })
    const rxPort = await benchPort()
    await new Promise<void>((r) => rx.listen(rxPort, '127.0.0.1', r))
    await fetch(`${project}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/` }) })
    const lat: number[] = []
    let missed = 0
    for (let i = 0; i < EVENTS; i++) {
      const got = new Promise<boolean>((r) => {
        onEvent = () => r(true)
        setTimeout(() => r(false), 10_000)
      })
      const t0 = performance.now()
      const put = await timed(() => fetch(`${project}/flags/bench`, { method: 'PUT', headers, body: JSON.stringify({ default_value: `e${i}` }) }))
      // An event not received within 10 s is counted as missed; the next change waits for its own.
      if (put !== null && (await got)) lat.push(performance.now() - t0)
      else if (put !== null) missed++
      onEvent = null
    }
    console.log(`change → event: p50 ${ms(pct(lat, 50))} ms, p99 ${ms(pct(lat, 99))} ms`)
    await workers.close(2_000)
    rx.close()
    server.close()
    await platform.close()

    const first = blocks[0]!
    const last = blocks.at(-1)!
    const ref = mean(gets)
    const section = [
      '## Flag audit history and change webhooks (`npm run bench:flags-history`)',
      '',
      `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), load average ${loadBefore.toFixed(1)} before the timed requests and ${os.loadavg().map((x) => x.toFixed(1)).join(' / ')} at the end; ` +
        `${process.env.MONGO_URL ? 'MongoDB' : 'embedded engine'}, one API process, sequential requests after ${WARMUP} warm-up GET/PUT pairs (not counted). Reference: GET of the same flag, alternating with the PUTs. ` +
        `Failed requests (counted, left out of the times): ${failedCount()}${failedCount() ? ` (${Object.entries(failures).map(([k, n]) => `${k}: ${n}`).join(', ')})` : ''}; change events not received within 10 s: ${missed}.`,
      '',
      '| one project\'s history | load (1 min) before | PUT (ms, mean) | GET reference (ms) | PUT / GET |',
      '|---|---|---|---|---|',
      ...blocks.map((b) => `| ${b.from}–${b.from + size} entries | ${b.load.toFixed(1)} | ${ms(b.put)} | ${ms(b.get)} | ${(b.put / b.get).toFixed(1)} |`),
      '',
      `- PUT of the last block / first block: **${(last.put / first.put).toFixed(2)}** (growth with the history: entries spread over 32 slots by id); PUT / GET over the run: ${(mean(puts) / ref).toFixed(1)}.`,
      `- A page of history (\`GET …/flags/{key}/history?limit=50\` with ${UPDATES} entries; every slot is asked and the answers merged): ${ms(mean(pages))} ms, ${(mean(pages) / mean(pageRefs)).toFixed(1)} × the GET of the flag.`,
      `- Change → signed event at a local receiver (${EVENTS} changes, one at a time, one worker): p50 **${ms(pct(lat, 50))} ms**, p99 ${ms(pct(lat, 99))} ms.`,
    ].join('\n')
    console.log(`\n${section}`)
    if (!values['no-write']) writeBenchSection(section)
  } finally {
    for (const s of stops.reverse()) await s().catch(() => undefined)
  }
}

runBench(main)
