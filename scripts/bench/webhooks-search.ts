// Webhook search benchmark (issue #21): fills one endpoint with captures (up to --count, 100,000
// by default, or as many as the storage takes in --fill-seconds: the embedded engine is slow to
// write large collections), then times GET …/requests?<filter>&limit=50 for each filter kind
// (p50 of --runs requests, one at a time). Target: ≤ 50 ms per filtered page at 100,000 captures.
//
//   npm run bench:webhooks-search [-- --count 100000 --fill-seconds 120 --runs 20 --no-write]
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { createAccount, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { startMongoEngine } from '../../src/platform/embedded/mongo-engine.ts'
import { startRedisServer } from '../../src/platform/embedded/redis-server.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { listen } from '../../src/main.ts'
import { ALL_INDEXES } from '../../src/services.ts'
import { captureCollection, captureKey, type CaptureDoc } from '../../src/webhooks/captures.ts'
import { endpoints } from '../../src/webhooks/endpoints.ts'
import { webhooksService } from '../../src/webhooks/service.ts'
import { writeBenchSection } from './lib/report.ts'
import { fmt } from './lib/http-load.ts'

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    'fill-seconds': { type: 'string', default: '120' },
    runs: { type: 'string', default: '20' },
    'no-write': { type: 'boolean', default: false },
  },
})
const COUNT = Number(values.count)
const RUNS = Number(values.runs)
const SECTION = '## Webhook search'

const stops: Array<() => Promise<void>> = []
const redisUrl: string = process.env.REDIS_URL ?? (await startRedisServer().then((r) => (stops.push(() => r.child.stop()), r.url as string)))
const mongoUrl: string = process.env.MONGO_URL ?? (await startMongoEngine().then((m) => (stops.push(() => m.child.stop()), m.url as string)))
const storage = process.env.MONGO_URL ? 'MongoDB (MONGO_URL)' : 'embedded engine (jongodb)'
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: `bench_search_${Date.now()}`, QUEUE_PREFIX: `bs${Date.now()}` })
const platform = await createPlatform({ config, redisUrl, mongoUrl, indexes: ALL_INDEXES })
const server = await listen(platform, webhooksService, 0)
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const { account, apiKey: key } = await createAccount(platform.db, 'webhooks', `bench-search-${Date.now()}@example.com`)
await setPlan(platform.db, account._id, 'business')
const ep = (await (await fetch(`${base}/api/v1/endpoints`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })).json()) as { endpoint_id: string }
const token = ep.endpoint_id

const METHODS = ['POST', 'POST', 'POST', 'PUT', 'GET', 'DELETE', 'PATCH']
const PATHS = ['/stripe', '/github/push', '/github/issues', '/shopify/orders', '/paddle']
const STATUSES = ['delivered', 'delivered', 'delivered', 'dead', 'retrying'] as const
function doc(id: number): CaptureDoc {
  const t = new Date(Date.now() - (COUNT - id) * 1_000)
  const body = Buffer.from(JSON.stringify({ id: `evt_${id}`, type: id % 97 === 0 ? 'needle.found' : 'invoice.paid', amount: id % 1000 }))
  const event = id % 13 === 0 ? 'ping' : 'push'
  return {
    _id: captureKey(token, id),
    endpoint_id: token,
    account_id: account._id,
    id,
    method: METHODS[id % METHODS.length]!,
    path: `/hook/${token}${PATHS[id % PATHS.length]}`,
    sub_path: PATHS[id % PATHS.length]!,
    query: '',
    headers: { 'content-type': 'application/json', 'x-github-event': event },
    raw_headers: ['Content-Type', 'application/json', 'X-GitHub-Event', event],
    content_type: 'application/json',
    ip_address: '127.0.0.1',
    size_bytes: body.length,
    received_at: t,
    expires_at: new Date(t.getTime() + 90 * 86_400_000),
    body: body as never,
    search_text: body.toString().toLowerCase(),
    forward: { status: STATUSES[id % STATUSES.length]!, round: 0, attempts: 1, last_status: 200, last_error: null, next_attempt_at: null, delivered_at: null },
  }
}

const fillStart = performance.now()
const fillDeadline = Date.now() + Number(values['fill-seconds']) * 1_000
let stored = 0
while (stored < COUNT && Date.now() < fillDeadline) {
  const n = Math.min(1_000, COUNT - stored)
  // One insertMany per slot of the partitioned collection (as the capture's group commit does).
  const bySlot = new Map<string, CaptureDoc[]>()
  for (let i = 1; i <= n; i++) {
    const d = doc(stored + i)
    const name = captureCollection(platform.db, token, d.id).collectionName
    bySlot.set(name, [...(bySlot.get(name) ?? []), d])
  }
  for (const docs of bySlot.values()) await captureCollection(platform.db, token, docs[0]!.id).insertMany(docs, { ordered: false })
  stored += n
  // Listing walks down from the endpoint's newest id.
  await endpoints(platform.db).updateOne({ _id: token }, { $set: { seq: stored } })
}
const fillSeconds = (performance.now() - fillStart) / 1000
console.log(`stored ${stored} captures in ${fillSeconds.toFixed(0)} s`)

// The middle of what was stored (times are spread as if all COUNT captures had been).
const mid = doc(Math.max(1, Math.floor(stored / 2))).received_at.toISOString().slice(0, 19)
const filters: Array<[string, string]> = [
  ['none (newest 50)', ''],
  ['method=PUT', 'method=PUT'],
  ['path_prefix=/github', 'path_prefix=/github'],
  ['header=x-github-event:ping', 'header=x-github-event:ping'],
  ['q=needle (1 in 97 bodies)', 'q=needle'],
  ['since=<middle>&until', `since=${mid}&until=${new Date().toISOString().slice(0, 19)}`],
  ['forward_status=dead', 'forward_status=dead'],
  ['method=POST&path_prefix=/stripe&forward_status=delivered', 'method=POST&path_prefix=/stripe&forward_status=delivered'],
]
const rows: string[] = []
const load = os.loadavg()[0]!
for (const [label, qs] of filters) {
  const times: number[] = []
  let n = 0
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    const r = await fetch(`${base}/api/v1/endpoints/${token}/requests?limit=50&${qs}`, { headers: { authorization: `Bearer ${key}` } })
    const j = (await r.json()) as { requests: unknown[] }
    times.push(performance.now() - t0)
    n = j.requests.length
  }
  times.sort((a, b) => a - b)
  const p50 = times[Math.floor(times.length / 2)]!
  rows.push(`| ${label} | ${n} | **${fmt(p50)} ms** | ${fmt(times.at(-1)!)} ms | ${p50 <= 50 ? 'met' : 'missed'} |`)
}

const lines = [
  SECTION,
  '',
  `Run ${new Date().toISOString().slice(0, 16)}Z on ${os.cpus().length} cores, load average ${load.toFixed(2)} (the machine is shared), storage: **${storage}**, ` +
    `**${stored.toLocaleString('en-US')} captures** on one endpoint (of ${COUNT.toLocaleString('en-US')} asked; filled in ${fillSeconds.toFixed(0)} s), ` +
    `${RUNS} sequential GET …/requests?limit=50&<filter> each, over HTTP in the same process. \`npm run bench:webhooks-search\`.`,
  '',
  '| filter | page size | p50 | max | ≤ 50 ms |',
  '|---|---|---|---|---|',
  ...rows,
  '',
  "Every filter is ANDed with an index whose prefix is `endpoint_id` (src/webhooks/search.ts; `q` is an unanchored regex over `search_text`, scanned within the endpoint). These figures are the embedded engine's on a machine shared with other builds (load average above 20 on 2 cores): it could store only about 11,000 captures in the fill time, and even the unfiltered newest-50 page (the plain `{endpoint_id, id}` index walk that existed before) takes over a second, so the ≤ 50 ms target at 100,000 captures is **not demonstrated here**; measure it on MongoDB with `MONGO_URL=mongodb://… npm run bench:webhooks-search`.",
  '',
]
const report = lines.join('\n')
console.log(report)
if (!values['no-write']) writeBenchSection(report)
await new Promise<void>((r) => server.close(() => r()))
await platform.close()
for (const s of stops) await s()
process.exit(0)
