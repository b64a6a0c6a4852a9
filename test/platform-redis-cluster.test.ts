// The whole system on a real 3-master Redis Cluster (REDIS_URL=redis+cluster://…): invoices,
// batches, waking a waiting request, flag propagation between two replicas and capture + forward work, and the keys are
// spread over the shards (each queue has its own hash tag). Also: the configuration checks that
// stop a process whose Redis configuration cannot work.
import assert from 'node:assert/strict'
import { loadConfig } from '../src/platform/config.ts'
import { parseRedisTarget, queuePrefixFor } from '../src/platform/redis/redis-target.ts'
import { startCluster, type TestCluster } from './helpers/redis-topologies.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { account, rows, submit, waitFinished } from './helpers/invoice-batch.ts'
import { capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'
import { qpdfCheck } from './helpers/pdf.ts'
import { awaitedJobWake, WAKE_BYTES } from './helpers/wake.ts'

describe('platform: Redis configuration forms', () => {
  it('parses a standalone URL, a cluster seed list and a Sentinel set', () => {
    assert.deepEqual(parseRedisTarget('redis://127.0.0.1:6379/2'), { kind: 'standalone', url: 'redis://127.0.0.1:6379/2' })
    assert.deepEqual(parseRedisTarget('redis+cluster://a:7000,b:7001'), {
      kind: 'cluster',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
      tls: false,
    })
    assert.deepEqual(parseRedisTarget('rediss+sentinel://:s%40cret@s1:26379,s2/mymaster/3'), {
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'mymaster',
      db: 3,
      tls: true,
      password: 's@cret',
    })
  })

  const bad: [string, Record<string, string>, RegExp][] = [
    ['a malformed URL', { REDIS_URL: 'localhost:6379' }, /REDIS_URL: must be a redis:/],
    ['an unknown scheme', { REDIS_URL: 'redis+shard://a:1' }, /REDIS_URL: has an unknown scheme/],
    ['a sentinel URL without a master name', { REDIS_URL: 'redis+sentinel://a:26379' }, /REDIS_URL: names no master/],
    ['a bad port', { REDIS_URL: 'redis+cluster://a:1,b:99999' }, /REDIS_URL: has a port out of range/],
    ['several hosts in a plain URL', { REDIS_URL: 'redis://a:1,b:2' }, /REDIS_URL: .*(names several hosts|not a valid URL)/],
    ['a cluster with a hash-tag prefix', { REDIS_URL: 'redis+cluster://a:1', QUEUE_PREFIX: '{qw}' }, /QUEUE_PREFIX: must not contain \{ or \}/],
  ]
  for (const [what, env, message] of bad) {
    it(`${what} stops the configuration, naming the variable`, () => {
      assert.throws(() => loadConfig(env), (e: Error) => message.test(e.message))
    })
  }

  it('a cluster gives each queue its own hash tag; one server keeps the plain prefix', () => {
    assert.equal(queuePrefixFor('qw', 'invoice-render', true), 'qw:{invoice-render}')
    assert.equal(queuePrefixFor('qw', 'invoice-render', false), 'qw')
  })
})

describe('platform: the system on a 3-master Redis Cluster', () => {
  let cluster: TestCluster
  let sys: TestSystem
  let target: Target
  before(async function () {
    this.timeout(120_000)
    cluster = await startCluster(3)
    sys = await startSystem({ env: { REDIS_URL: cluster.url } })
    target = await startTarget()
  })
  after(async () => {
    await target?.close()
    await sys?.stop()
    await cluster?.stop()
  })

  it('renders an invoice', async function () {
    this.timeout(60_000)
    const { key } = await account(sys)
    const r = await post(`${sys.url.invoice}/invoice`, { items: [{ description: 'Work', quantity: 2, unit_price: 50 }] }, { key })
    assert.equal(r.status, 200, r.text)
    qpdfCheck(r.body)
  })

  it('wakes the process that waits for a job: the worker’s publish reaches its subscription through the cluster', async function () {
    this.timeout(60_000)
    assert.deepEqual(await awaitedJobWake(sys.platform, 't-cluster-wake'), { event: 'done', payload: WAKE_BYTES })
  })

  it('finishes a batch', async function () {
    this.timeout(120_000)
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, rows(25))
    assert.equal(res.status, 202, res.text)
    const st = await waitFinished(sys, key, res.json.batch_id, 100_000)
    assert.equal(st.counts.done, 25)
  })

  it('serves a flag change made on one replica from a second replica within 1 s', async function () {
    this.timeout(60_000)
    const sys2 = await startSystem({ services: ['flags'], workers: false, env: { REDIS_URL: cluster.url, MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! } })
    try {
      const api = `${sys.url.flags}/api/v1`
      const api2 = `${sys2.url.flags}/api/v1`
      const s = await post(`${api}/signup`, { email: `cluster-${Date.now()}@example.com` })
      assert.equal(s.status, 201, s.text)
      const { api_key: apiKey, sdk_key: sdkKey, project } = s.json
      assert.equal((await post(`${api}/projects/${project.id}/flags`, { key: 'f', enabled: true, default_value: 'v0' }, { key: apiKey })).status, 201)
      const value = async () => (await post(`${api2}/evaluate`, { sdk_key: sdkKey, flags: ['f'] })).json.flags.f.value
      assert.equal(await value(), 'v0')
      // Five changes; each timed from the change's 200 on replica 1 to the first evaluation on
      // replica 2 that serves it (evaluations back to back). The bound is the one the README promises (1 s).
      const took: number[] = []
      for (let i = 1; i <= 5; i++) {
        assert.equal((await call('PUT', `${api}/projects/${project.id}/flags/f`, { json: { default_value: `v${i}` }, key: apiKey })).status, 200)
        const t0 = performance.now()
        await waitFor(async () => (await value()) === `v${i}`, 10_000, `replica 2 to serve v${i}`)
        took.push(Math.round(performance.now() - t0))
      }
      if (process.env.DEBUG_FAILOVER) console.log(`      flag change served by replica 2 after ${took.join(', ')} ms`)
      assert.ok(Math.max(...took) <= 1_000, `served after ${took.join(', ')} ms`)
    } finally {
      await sys2.stop()
    }
  })

  it('captures and forwards', async function () {
    this.timeout(60_000)
    const key = await signup(sys, 'starter')
    const ep = await createEndpoint(sys, key, { forward_url: target.url })
    const r = await capture(ep.url, { body: 'hello cluster' })
    assert.equal(r.status, 200)
    const got = await waitFor(async () => {
      const x = (await get(`${sys.url.webhooks}/api/v1/endpoints/${ep.endpoint_id}/requests/1`, { key })).json
      return x?.forward?.status === 'delivered' && x
    }, 30_000, 'delivery')
    assert.equal(got.forward.attempts, 1)
    assert.equal(target.received.at(-1)!.body.toString(), 'hello cluster')
  })

  it('spreads the keys over at least 2 shards, each queue within one slot', async () => {
    const prefix = sys.env.QUEUE_PREFIX!
    const perNode = await Promise.all(cluster.direct().map((c) => c.keys(`${prefix}:*`)))
    const withKeys = perNode.filter((k) => k.length > 0).length
    assert.ok(withKeys >= 2, `keys on ${withKeys} node(s): ${perNode.map((k) => k.length).join(', ')}`)
    // Every key of one queue sits on one node (the node of its hash tag).
    const render = perNode.map((k) => k.filter((x) => x.startsWith(`${prefix}:{invoice-render}:`)).length)
    assert.equal(render.filter((n) => n > 0).length, 1, `invoice-render keys per node: ${render.join(', ')}`)
  })

  it('readiness is true', async () => {
    const r = await get(`${sys.root.invoice}/readyz`)
    assert.equal(r.status, 200, r.text)
  })
})
