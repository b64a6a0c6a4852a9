// Chaos: 60 s of steady load (invoices, batch rows, captures with forwarding, flag evaluations)
// on two API processes and two worker processes (`src/main.ts api|worker`, real OS processes),
// while every 5 s a random one of them is `kill -9`ed and started again. Afterwards every
// accepted item's effect exists exactly once: usage = invoices stored, every accepted batch
// finished, every accepted capture stored once and forwarded at least once.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from './helpers/ports.ts'
import { invoiceSlots } from '../src/invoice/store/invoice-store.ts'
import { captures } from '../src/webhooks/store/capture-store.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { account, rows, submit, usage, waitFinished } from './helpers/invoice-batch.ts'
import { createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'

const freeServicePort = () => freePort([3001, 3002, 3003])
// 60 s of load (10–11 kills); CHAOS_MS changes it.
const LOAD_MS = Number(process.env.CHAOS_MS ?? 60_000)
const KILL_EVERY_MS = 5_000

interface Member {
  name: string
  start(): ChildProcess
  proc: ChildProcess
}

function spawnApi(env: Record<string, string>, ports: { invoice: number; flags: number; webhooks: number }): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api'], {
    env: { ...process.env, ...env, INVOICE_PORT: String(ports.invoice), FLAGS_PORT: String(ports.flags), WEBHOOKS_PORT: String(ports.webhooks) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  child.stderr!.on('data', (b) => process.env.DEBUG_WORKERS && process.stderr.write(b))
  return child
}

describe('platform: chaos — processes killed under load', () => {
  let sys: TestSystem
  let target: Target
  const members: Member[] = []
  before(async () => {
    sys = await startSystem({ workers: false })
    target = await startTarget()
  })
  after(async () => {
    for (const m of members) if (m.proc.exitCode === null) m.proc.kill('SIGKILL')
    await target?.close()
    await sys?.stop()
  })

  it('every accepted item has its effect exactly once', async function () {
    this.timeout(LOAD_MS + 300_000)
    const apis: { invoice: string; flags: string; webhooks: string }[] = []
    for (let i = 0; i < 2; i++) {
      const ports = { invoice: await freeServicePort(), flags: await freeServicePort(), webhooks: await freeServicePort() }
      const urls = { invoice: `http://127.0.0.1:${ports.invoice}`, flags: `http://127.0.0.1:${ports.flags}`, webhooks: `http://127.0.0.1:${ports.webhooks}` }
      apis.push(urls)
      const m: Member = { name: `api-${i}`, start: () => spawnApi(sys.env, ports), proc: null as unknown as ChildProcess }
      m.proc = m.start()
      members.push(m)
    }
    for (let i = 0; i < 2; i++) {
      const m: Member = { name: `worker-${i}`, start: () => spawnWorker(sys.env), proc: null as unknown as ChildProcess }
      m.proc = m.start()
      members.push(m)
    }
    let last = ''
    for (const a of apis) {
      await waitFor(async () => {
        const r = await get(`${a.invoice}/readyz`).catch((e: Error) => ({ status: 0, text: e.message }))
        last = r.text
        return r.status === 200
      }, 180_000, 'an API replica to be ready').catch((e: Error) => assert.fail(`${e.message}: ${last}`))
    }

    const { key: invoiceKey, id: invoiceAccount } = await account(sys, 'business')
    const hookKey = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, hookKey, { forward_url: target.url })
    const hookPath = new URL(ep.url).pathname
    const fs = await post(`${sys.url.flags}/api/v1/signup`, { email: `chaos-${Date.now()}@example.com` })
    const fAcc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(fs.json.api_key) })
    await setPlan(sys.platform.db, String(fAcc!._id), 'business')
    assert.equal((await post(`${sys.url.flags}/api/v1/projects/${fs.json.project.id}/flags`, { key: 'c', enabled: true }, { key: fs.json.api_key })).status, 201)

    const pick = () => apis[Math.floor(Math.random() * apis.length)]!
    const accepted = { invoices: 0, batches: [] as string[], captures: [] as string[], evaluations: 0 }
    const tried = { invoices: 0, batches: 0, captures: 0, evaluations: 0 }
    const end = Date.now() + LOAD_MS
    const loop = async (every: number, fn: () => Promise<void>) => {
      while (Date.now() < end) {
        await fn().catch(() => undefined)
        await new Promise((r) => setTimeout(r, every))
      }
    }
    let n = 0
    const load = Promise.all([
      loop(100, async () => {
        tried.invoices++
        const r = await post(`${pick().invoice}/api/v1/invoice`, { items: [{ description: 'chaos', quantity: 1, unit_price: 1 }] }, { key: invoiceKey })
        if (r.status === 200) accepted.invoices++
      }),
      loop(3_000, async () => {
        tried.batches++
        const r = await post(`${pick().invoice}/api/v1/invoices/batch`, rows(10), { key: invoiceKey })
        if (r.status === 202) accepted.batches.push(r.json.batch_id)
      }),
      loop(50, async () => {
        const id = `c${++n}`
        tried.captures++
        const r = await call('POST', `${pick().webhooks}${hookPath}`, { raw: id, headers: { 'content-type': 'text/plain', 'x-chaos-id': id } })
        if (r.status === 200) accepted.captures.push(id)
      }),
      loop(20, async () => {
        tried.evaluations++
        const r = await post(`${pick().flags}/api/v1/evaluate`, { sdk_key: fs.json.sdk_key, flags: ['c'] })
        if (r.status === 200 && r.json.flags.c.reason !== 'FLAG_NOT_FOUND') accepted.evaluations++
      }),
    ])
    // The chaos: a random member killed hard every 5 s and started again at once.
    const kills: string[] = []
    const chaos = (async () => {
      while (Date.now() + KILL_EVERY_MS < end) {
        await new Promise((r) => setTimeout(r, KILL_EVERY_MS))
        const m = members[Math.floor(Math.random() * members.length)]!
        m.proc.kill('SIGKILL')
        await waitForExit(m.proc)
        kills.push(m.name)
        m.proc = m.start()
      }
    })()
    await Promise.all([load, chaos])
    if (process.env.DEBUG_FAILOVER) console.log('      kills', kills.join(' '), JSON.stringify({ tried, accepted: { ...accepted, batches: accepted.batches.length, captures: accepted.captures.length } }))
    assert.ok(kills.length >= Math.floor(LOAD_MS / KILL_EVERY_MS) - 2)
    assert.ok(accepted.invoices > 0 && accepted.batches.length > 0 && accepted.captures.length > 0 && accepted.evaluations > 0, JSON.stringify(tried))

    // Every accepted batch finishes; then usage equals the invoices stored, and covers every 200.
    for (const id of accepted.batches) {
      const st = await waitFinished(sys, invoiceKey, id, 180_000)
      assert.equal(st.counts.done + st.counts.failed, 10)
    }
    // A single invoice whose API process was killed while it waited is failed by invoices-abandoned
    // (its unit comes back); every other one ends done or failed by its render.
    await waitFor(async () => (await invoiceSlots(sys.platform.db).countDocuments({ account_id: invoiceAccount, status: { $in: ['queued', 'rendering'] } })) === 0, 180_000, 'every invoice to settle')
    const stored = await invoiceSlots(sys.platform.db).countDocuments({ account_id: invoiceAccount, status: 'done' })
    const used = await usage(sys, invoiceKey)
    assert.equal(used, stored, `usage ${used}, invoices stored ${stored}`)
    assert.ok(stored >= accepted.invoices, `stored ${stored} < accepted single invoices ${accepted.invoices}`)

    // Every accepted capture is stored exactly once and forwarded at least once.
    const seen = new Map<string, number>()
    for (const d of await captures(sys.platform.db).findAll({ endpoint_id: ep.endpoint_id })) {
      const id = d.headers['x-chaos-id']!
      seen.set(id, (seen.get(id) ?? 0) + 1)
    }
    for (const id of accepted.captures) assert.equal(seen.get(id), 1, `capture ${id} stored ${seen.get(id) ?? 0} times`)
    await waitFor(
      () => {
        const got = new Set(target.received.map((r) => r.headers['x-chaos-id']))
        return accepted.captures.every((id) => got.has(id))
      },
      180_000,
      'every accepted capture to be forwarded',
    )
    for (const m of members) {
      m.proc.kill('SIGTERM')
      await waitForExit(m.proc)
    }
  })
})
