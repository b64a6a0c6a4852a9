// Leased rate limits (createLeasedLimiter) against the real embedded Redis: the plan limit holds
// per window across replicas (separate limiter instances and connections), points are taken from
// Redis in blocks rather than one round trip per request, and windows end.
import assert from 'node:assert/strict'
import type { RedisClient as Redis } from '../src/platform/redis/redis.ts'
import { HttpError } from '../src/platform/http/errors.ts'
import { createLeasedLimiter, type Limiter } from '../src/platform/http/rate-limit.ts'
import { randomId } from '../src/platform/ids.ts'
import { createRedis, redisReady } from '../src/platform/redis/redis.ts'

const MESSAGE = 'Rate limit exceeded: 20 per second'

async function until(ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 5))
  }
}

async function outcomes(limiter: Limiter, key: string, n: number): Promise<Array<number>> {
  return Promise.all(
    Array.from({ length: n }, () =>
      limiter.take(key).then(
        () => 200,
        (e) => (e instanceof HttpError ? e.status : -1),
      ),
    ),
  )
}

describe('platform: leased rate limit', () => {
  const conns: Redis[] = []
  let namespace: string
  const connect = async () => {
    const r = createRedis(process.env.TEST_REDIS_URL!, 'producer')
    conns.push(r)
    await redisReady(r)
    return r
  }
  const limiter = (redis: Redis, extra: { lease?: number; points?: number } = {}) =>
    createLeasedLimiter(redis, { name: 'test', points: extra.points ?? 20, durationSec: 1, message: MESSAGE, namespace, lease: extra.lease })

  beforeEach(() => {
    namespace = `rltest_${randomId()}`
  })
  after(() => {
    for (const c of conns) c.disconnect()
  })

  it('one replica: of N concurrent takes exactly the limit pass, the rest get 429 with Retry-After', async () => {
    const l = limiter(await connect(), { lease: 1 })
    const rs = await outcomes(l, 'k', 30)
    assert.equal(rs.filter((s) => s === 200).length, 20)
    assert.equal(rs.filter((s) => s === 429).length, 10)
    const err = await l.take('k').then(() => null, (e) => e as HttpError)
    assert.ok(err instanceof HttpError)
    assert.equal(err.message, MESSAGE)
    assert.ok(Number(err.headers['Retry-After']) >= 1)
  })

  it('tryTake spends a held lease without waiting, and takes nothing when no point is held', async () => {
    const l = limiter(await connect(), { points: 6, lease: 3 })
    assert.equal(l.tryTake('k'), false) // nothing leased yet: the caller must take()
    await l.take('k') // leases 3, spends 1
    assert.equal(l.tryTake('k'), true)
    assert.equal(l.tryTake('k'), true)
    assert.equal(l.tryTake('k'), false) // lease spent; a refusal would come from take()
    // The false answers took nothing: the window still has exactly 3 points for take().
    const rs = await outcomes(l, 'k', 5)
    assert.deepEqual(rs.sort(), [200, 200, 200, 429, 429])
  })

  it('the default lease (limit / 20) still admits exactly the limit from one replica', async () => {
    const l = limiter(await connect(), { points: 100 }) // lease 5
    const rs = await outcomes(l, 'k', 130)
    assert.equal(rs.filter((s) => s === 200).length, 100)
    assert.equal(rs.filter((s) => s === 429).length, 30)
  })

  it('two replicas together never admit more than the limit in a window', async () => {
    const a = limiter(await connect(), { lease: 3 })
    const b = limiter(await connect(), { lease: 3 })
    const [ra, rb] = await Promise.all([outcomes(a, 'k', 25), outcomes(b, 'k', 25)])
    const passed = [...ra, ...rb].filter((s) => s === 200).length
    // Both replicas want more than they can get, so every leased point is spent: exactly the limit.
    assert.equal(passed, 20)
    assert.equal([...ra, ...rb].filter((s) => s === 429).length, 30)
  })

  it('two replicas asking for leases ahead of need still admit exactly the limit together', async () => {
    const a = limiter(await connect(), { points: 40, lease: 8 })
    const b = limiter(await connect(), { points: 40, lease: 8 })
    const [ra, rb] = await Promise.all([outcomes(a, 'k', 60), outcomes(b, 'k', 60)])
    const all = [...ra, ...rb]
    assert.equal(all.filter((s) => s === 200).length, 40)
    assert.equal(all.filter((s) => s === 429).length, 80)
  })

  it('takes points from Redis in blocks: a few requests cost one lease', async () => {
    const redis = await connect()
    const l = limiter(redis, { lease: 3 })
    for (let i = 0; i < 3; i++) await l.take('k')
    assert.equal(await redis.get(`${namespace}:rl:test:lease:k`), '3') // one lease of 3, spent locally
    await l.take('k')
    assert.equal(await redis.get(`${namespace}:rl:test:lease:k`), '6')
  })

  it('asks for the next lease when a quarter of the current one is left, so no request waits for it', async () => {
    const redis = await connect()
    const counter = `${namespace}:rl:test:lease:k`
    const l = limiter(redis, { points: 100, lease: 8 })
    for (let i = 0; i < 5; i++) await l.take('k')
    assert.equal(await redis.get(counter), '8', '3 left: not yet')
    assert.equal(l.tryTake('k'), true) // 2 left: a quarter of 8
    await until(async () => (await redis.get(counter)) === '16')
    for (let i = 0; i < 10; i++) assert.equal(l.tryTake('k'), true, `point ${i} served from what was leased ahead`)
  })

  it('a lease asked for ahead of need that starts a new window does not carry the last window’s points into it', async () => {
    const redis = await connect()
    const counter = `${namespace}:rl:test:lease:k`
    const l = limiter(redis, { points: 100, lease: 8 })
    for (let i = 0; i < 5; i++) await l.take('k') // 3 left
    await redis.del(counter) // the window ends in Redis while this replica still holds points
    assert.equal(l.tryTake('k'), true) // 2 left: the lease ahead of need starts a new window
    await until(async () => (await redis.get(counter)) === '8')
    let served = 0
    while (l.tryTake('k')) served++
    assert.equal(served, 8, 'only the new window’s 8 points: the 2 left of the last window are dropped')
  })

  it('a lease asked for ahead of need that fails leaves the held points and answers the next caller 503', async () => {
    const redis = await connect()
    const l = limiter(redis, { points: 100, lease: 8 })
    for (let i = 0; i < 5; i++) await l.take('k') // 3 left
    redis.disconnect() // the ahead-of-need lease fails: no unhandled rejection, nothing lost
    assert.equal(l.tryTake('k'), true)
    await new Promise((r) => setTimeout(r, 50))
    assert.equal(l.tryTake('k'), true)
    assert.equal(l.tryTake('k'), true)
    const err = await l.take('k').then(() => null, (e) => e as HttpError)
    assert.equal(err?.status, 503)
  })

  it('keys have their own budgets, and a window ends', async () => {
    const l = limiter(await connect(), { lease: 4 })
    const rs = await outcomes(l, 'a', 21)
    assert.equal(rs.filter((s) => s === 200).length, 20)
    assert.deepEqual(await outcomes(l, 'b', 3), [200, 200, 200])
    await new Promise((r) => setTimeout(r, 1_100))
    assert.deepEqual(await outcomes(l, 'a', 3), [200, 200, 200])
  })

  it('Redis unavailable: 503, not an admission', async () => {
    const down = createRedis('redis://127.0.0.1:1', 'producer', { retryStrategy: () => null })
    conns.push(down)
    down.on('error', () => {})
    const l = limiter(down)
    const err = await l.take('k').then(() => null, (e) => e as HttpError)
    assert.ok(err instanceof HttpError)
    assert.equal(err.status, 503)
  })
})
