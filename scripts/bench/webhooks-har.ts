// HAR export of a large page: memory of the API process and the latency of other requests on it
// while one client downloads GET …/requests.har?limit=500 of captures with 1 MiB bodies (half
// binary, exported as base64, half JSON text). The export streams one entry at a time, so the
// process should grow by a few entries, not by the export; the reference in the same run is the
// export's own size (what building it in memory would hold at least, before JSON copies) and, for
// latency, the same probe request on the idle process (after 10 warm-up probes). A failed probe
// is counted, not fatal.
//
//   npm run bench:webhooks-har [-- --count 500 --no-write]
import { benchMongo, benchPort, benchRedis } from './lib/bench-env.ts'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { createAccount, setPlan } from '../../src/platform/accounts.ts'
import { loadConfig } from '../../src/platform/config.ts'
import { createPlatform } from '../../src/platform/platform.ts'
import { listen } from '../../src/serve.ts'
import { ALL_INDEXES } from '../../src/collections.ts'
import { captureCollection, captureKey, type CaptureDoc } from '../../src/webhooks/store/capture-store.ts'
import { endpoints } from '../../src/webhooks/store/endpoint-store.ts'
import { webhooksService } from '../../src/webhooks/service.ts'
import { writeBenchSection } from './lib/report.ts'

const { values } = parseArgs({ options: { count: { type: 'string', default: '500' }, 'no-write': { type: 'boolean', default: false } } })
const COUNT = Number(values.count)
const MiB = 1024 * 1024

const stops: Array<() => Promise<void>> = []
const redis = await benchRedis()
stops.push(() => redis.child.stop())
const mongo = await benchMongo()
stops.push(() => mongo.child.stop())
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', MONGO_DB: `bench_har_${Date.now()}`, QUEUE_PREFIX: `bh${Date.now()}` })
const platform = await createPlatform({ config, redisUrl: redis.url, mongoUrl: mongo.url, indexes: ALL_INDEXES })
const server = await listen(platform, webhooksService, await benchPort())
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const { account, apiKey: key } = await createAccount(platform.db, 'webhooks', `bench-har-${Date.now()}@example.com`)
await setPlan(platform.db, account._id, 'business')
const token = ((await (await fetch(`${base}/api/v1/endpoints`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' })).json()) as { endpoint_id: string }).endpoint_id

// Stored directly, as the capture route stores them (inline bodies up to 1 MiB).
const text = Buffer.from(JSON.stringify({ data: 'x'.repeat(MiB - 20) }).slice(0, MiB))
for (let id = 1; id <= COUNT; id++) {
  const body = id % 2 ? randomBytes(MiB) : text
  const now = new Date()
  const doc: CaptureDoc = {
    _id: captureKey(token, id), endpoint_id: token, account_id: account._id, id, method: 'POST', path: `/hook/${token}/big`, sub_path: '/big', query: '',
    headers: { 'content-type': id % 2 ? 'application/octet-stream' : 'application/json' }, raw_headers: ['Content-Type', id % 2 ? 'application/octet-stream' : 'application/json'],
    content_type: id % 2 ? 'application/octet-stream' : 'application/json', ip_address: '127.0.0.1', size_bytes: body.length, received_at: now,
    expires_at: new Date(now.getTime() + 86_400_000), body: body as never,
  }
  await captureCollection(platform.db, token, id).insertOne(doc)
}
await endpoints(platform.db).updateOne({ _id: token }, { $set: { seq: COUNT } })

// A failed probe is counted (by status; "errors": no answer) and left out of the times.
const probeFailures: Record<string, number> = {}
const probe = async (): Promise<number | null> => {
  const t = performance.now()
  const r = await fetch(`${base}/api/v1/endpoints/${token}/requests?limit=1`, { headers: { authorization: `Bearer ${key}` } }).catch(() => null)
  await r?.arrayBuffer().catch(() => undefined)
  if (r?.ok) return performance.now() - t
  const kind = r ? String(r.status) : 'errors'
  probeFailures[kind] = (probeFailures[kind] ?? 0) + 1
  return null
}
const push = (xs: number[], x: number | null) => void (x !== null && xs.push(x))
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const idle: number[] = []
// 10 warm-up probes (JIT, connections), not counted; then the idle reference.
for (let i = 0; i < 10; i++) await probe()
for (let i = 0; i < 60; i++) push(idle, await probe())
const loadBefore = os.loadavg()[0]!

await new Promise((r) => setTimeout(r, 1_000))
const rss0 = process.memoryUsage().rss
let peak = rss0
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20)
const busy: number[] = []
let exporting = true
const probing = (async () => {
  while (exporting) {
    push(busy, await probe())
    await new Promise((r) => setTimeout(r, 50))
  }
})()
const started = performance.now()
const curl = spawn('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{size_download}', '-H', `authorization: Bearer ${key}`, `${base}/api/v1/endpoints/${token}/requests.har?limit=${Math.min(COUNT, 500)}`])
let out = ''
curl.stdout.on('data', (b) => (out += b))
await new Promise((r) => curl.on('exit', r))
const seconds = (performance.now() - started) / 1000
exporting = false
await probing
clearInterval(sampler)
const [status, bytes] = out.split(' ').map(Number) as [number, number]

const grow = (peak - rss0) / MiB
const lines = [
  `export: HTTP ${status}, ${(bytes / MiB).toFixed(0)} MiB of HAR (${COUNT} captures × 1 MiB) in ${seconds.toFixed(1)} s`,
  `API process RSS: +${grow.toFixed(0)} MiB at peak (${((grow * MiB) / bytes).toFixed(3)} × the export's size)`,
  `other requests during the export: p50 ${pct(busy, 50).toFixed(1)} ms, p99 ${pct(busy, 99).toFixed(1)} ms, max ${Math.max(...busy).toFixed(1)} ms (${busy.length} probes); idle p50 ${pct(idle, 50).toFixed(1)} ms, p99 ${pct(idle, 99).toFixed(1)} ms → p50 ratio ${(pct(busy, 50) / pct(idle, 50)).toFixed(2)} ×`,
  `load average (1 min) before the export: ${loadBefore.toFixed(2)}, after: ${os.loadavg()[0]!.toFixed(2)}`,
  `failed probes (left out of the times): ${Object.values(probeFailures).reduce((a, b) => a + b, 0)}${Object.keys(probeFailures).length ? ` (${Object.entries(probeFailures).map(([k, c]) => `${k}: ${c}`).join(', ')})` : ''}`,
]
console.log(lines.join('\n'))
if (!values['no-write'])
  writeBenchSection(
    [
      '## Webhook HAR export',
      '',
      `\`npm run bench:webhooks-har\` (${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, embedded engine): one client downloads`,
      '`GET …/requests.har?limit=500` of captures with 1 MiB bodies (half binary, exported as base64,',
      'half JSON text) while another request probes the same API process every 50 ms.',
      '',
      ...lines.map((l) => `- ${l}`),
    ].join('\n'),
  )
await platform.close()
server.close()
for (const s of stops.reverse()) await s()
process.exit(0)
