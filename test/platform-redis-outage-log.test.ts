// A worker process (every queue, real redis-server) while Redis is down and back: every
// connection — including the ones BullMQ copies for its workers and queue events — has an error
// listener, so ioredis prints no "Unhandled error event", and each connection logs the outage once
// through the JSON logger (one "lost" line, one "back" line), not once per reconnect attempt.
import assert from 'node:assert/strict'
import { freePort } from './helpers/ports.ts'
import { startRedisServer, type EmbeddedRedis } from '../src/embedded/redis-server.ts'
import { spawnWorker, testEnv, waitForExit } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { waitFor } from './helpers/webhooks.ts'

describe('platform: Redis outage in the logs', () => {
  let redis: EmbeddedRedis

  after(async () => {
    await redis?.child.stop()
  })

  it('logs the outage once per connection, and ioredis prints nothing unhandled', async function () {
    this.timeout(120_000)
    redis = await startRedisServer({ port: await freePort(), appendonly: false })
    const port = await freePort()
    const child = spawnWorker(testEnv({ REDIS_URL: redis.url, LOG_LEVEL: 'info', WORKER_PORT: String(port) }))
    let out = ''
    let err = ''
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()))
    try {
      await waitFor(async () => (await get(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 60_000, 'the worker to be ready')
      const logs = () =>
        out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; redis?: string; queue?: string })
      const lines = (msg: string) => logs().filter((l) => l.msg.startsWith(msg))

      redis.child.kill()
      await new Promise((r) => redis.child.proc.once('exit', r))
      await waitFor(() => lines('Redis connection lost').length > 0, 30_000, 'the outage to be logged')
      // Reconnects come every ≤ 2 s: give them time to be retried (and, before, printed) several times.
      await new Promise((r) => setTimeout(r, 7_000))
      redis = await startRedisServer({ port: redis.port, appendonly: false })
      await waitFor(async () => (await get(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 60_000, 'the worker to be ready again')
      const lost = lines('Redis connection lost')
      await waitFor(() => lines('Redis connection back').length >= lost.length, 30_000, 'every connection to log its return')

      assert.doesNotMatch(err, /Unhandled error event/)
      // Worker (BullMQ's copies), producer and plain blocking connections each logged it, each once.
      const kinds = new Set(lost.map((l) => l.redis))
      for (const k of ['worker', 'producer', 'blocking']) assert.ok(kinds.has(k), `no "${k}" connection logged the outage: ${[...kinds].join(', ')}`)
      const perConnection = new Map<string, number>()
      for (const l of lost) if (l.queue) perConnection.set(`${l.redis}:${l.queue}`, (perConnection.get(`${l.redis}:${l.queue}`) ?? 0) + 1)
      assert.deepEqual([...perConnection].filter(([, n]) => n > 1), [])
      assert.equal(lines('Redis connection back').length, lost.length)
      // Connection errors forwarded by BullMQ go to those lines only (a job lost with Redis's data
      // is still reported as the worker error it is).
      const forwarded = logs().filter((l) => /^(worker|queue|queue events) error$/.test(l.msg))
      assert.deepEqual(forwarded.filter((l) => /ECONNREFUSED|Connection is closed/.test(String((l as { err?: string }).err))), [])
    } finally {
      child.kill('SIGTERM')
      await waitForExit(child)
    }
  })
})
