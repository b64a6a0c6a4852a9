// The platform's job API against real Redis and the engine: contracts, enqueue and enqueueMany
// (validation, id schemes, idempotency, bulk), the durable enqueue and the outbox sweep's
// registry, awaitOutcome, waking the one process that waits for a job, and the pairing of every
// contract with exactly one processor.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import { JOBS } from '../jobs/index.ts'
import { JOB_CONTRACTS } from '../src/job-contracts.ts'
import { awaitOutcome, listenForOutcome } from '../src/platform/queue/await-outcome.ts'
import { defineJob, defineJobContract, enqueue, enqueueAwaited, enqueueMany, WAKE_PAYLOAD_MAX, wakeWith } from '../src/platform/queue/job.ts'
import { parseWake, QueueRegistry, WAKE_FIELD, wakeMessage } from '../src/platform/queue/queues.ts'
import { enqueueDurably, sweepOutbox } from '../src/platform/queue/outbox.ts'
import { closeWorkers, registerWorker, type RegisteredWorker } from '../src/platform/queue/workers.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('platform: job API', function () {
  this.timeout(60_000)
  let sys: TestSystem
  const workers: RegisteredWorker[] = []
  before(async () => {
    sys = await startSystem({ services: [], workers: false })
  })
  after(async () => {
    await closeWorkers(workers, 2_000)
    await sys?.stop()
  })

  const queueName = () => `t-${randomBytes(4).toString('hex')}`
  const echo = (queue = queueName()) =>
    defineJobContract({
      queue,
      schema: z.object({ n: z.number().int().min(0), tag: z.string().max(16).optional() }),
      options: { attempts: 2 },
      id: (p) => `n-${p.n}`,
    })

  describe('contracts and processors', () => {
    it('every contract has exactly one processor, and every processor has a contract', () => {
      const contractQueues = JOB_CONTRACTS.map((c) => c.queue).sort()
      const processorQueues = JOBS.map((j) => j.queue).sort()
      assert.deepEqual(processorQueues, contractQueues)
      assert.equal(new Set(contractQueues).size, contractQueues.length, 'queue names are unique')
      for (const job of JOBS) {
        const contract = JOB_CONTRACTS.find((c) => c.queue === job.queue)!
        assert.equal(job.schema, contract.schema, `${job.queue}: the processor validates with the producer's schema`)
        assert.deepEqual(job.options, contract.options, `${job.queue}: options come from the contract`)
      }
    })
  })

  describe('enqueue', () => {
    it('adds a job under the contract’s id with the contract’s options; a second enqueue adds nothing', async () => {
      const c = echo()
      const job = await enqueue(sys.platform, c, { n: 7 })
      assert.equal(job.id, 'n-7')
      assert.equal(job.opts.attempts, 2)
      const again = await enqueue(sys.platform, c, { n: 7, tag: 'second' })
      assert.equal(again.id, 'n-7')
      const q = sys.platform.queues.queue(c.queue)
      assert.equal(await q.count(), 1)
      assert.deepEqual((await q.getJob('n-7'))!.data, { n: 7 }, 'the first payload stands')
    })

    it('an explicit jobId overrides the contract’s; per-call options override the contract’s', async () => {
      const c = echo()
      const job = await enqueue(sys.platform, c, { n: 1 }, { jobId: 'custom', attempts: 5, delay: 60_000 })
      assert.equal(job.id, 'custom')
      assert.equal(job.opts.attempts, 5)
      assert.equal(await job.getState(), 'delayed')
    })

    it('a payload the schema refuses is never enqueued', async () => {
      const c = echo()
      await assert.rejects(enqueue(sys.platform, c, { n: -1 }), /too_small|>=0|greater/i)
      await assert.rejects(enqueue(sys.platform, c, { n: 1, tag: 'x'.repeat(17) } as never))
      assert.equal(await sys.platform.queues.queue(c.queue).count(), 0)
    })
  })

  describe('enqueueMany', () => {
    it('adds 1,234 jobs in bounded bulk commands, each under its own id; repeating adds none', async () => {
      const c = echo()
      const entries = Array.from({ length: 1_234 }, (_, n) => ({ payload: { n } }))
      const added = await enqueueMany(sys.platform, c, entries)
      assert.equal(added.length, 1_234)
      assert.deepEqual(added.slice(0, 3).map((j) => j.id), ['n-0', 'n-1', 'n-2'])
      const q = sys.platform.queues.queue(c.queue)
      assert.equal(await q.count(), 1_234)
      await enqueueMany(sys.platform, c, entries.slice(0, 600))
      assert.equal(await q.count(), 1_234)
    })

    it('refuses the whole call when one payload is invalid, before adding any', async () => {
      const c = echo()
      await assert.rejects(enqueueMany(sys.platform, c, [{ payload: { n: 1 } }, { payload: { n: 1.5 } }]))
      assert.equal(await sys.platform.queues.queue(c.queue).count(), 0)
    })
  })

  describe('durable enqueue and the outbox registry', () => {
    it('needs a job id: a contract without an id scheme must be given one', async () => {
      const c = defineJobContract({ queue: queueName(), schema: z.object({}) })
      await assert.rejects(enqueueDurably(sys.platform, c, {}), /need a job id/)
      assert.equal(await enqueueDurably(sys.platform, c, {}, { jobId: 'given' }), true)
      assert.ok(await sys.platform.queues.queue(c.queue).getJob('given'))
    })

    it('an entry left in the outbox is re-enqueued through its queue’s contract; unknown queues are left alone', async () => {
      const c = echo()
      const outbox = sys.platform.db.collection('outbox')
      const old = new Date(Date.now() - 60_000)
      await outbox.insertMany([
        { _id: `${c.queue}:n-3` as never, queue: c.queue, job_id: 'n-3', payload: { n: 3 }, opts: {}, created_at: old, attempts: 0 },
        { _id: 'nobody:x' as never, queue: 'nobody', job_id: 'x', payload: {}, opts: {}, created_at: old, attempts: 0 },
      ])
      assert.equal(await sweepOutbox(sys.platform, [c]), 1)
      const job = await sys.platform.queues.queue(c.queue).getJob('n-3')
      assert.equal(job?.opts.attempts, 2, 'options come from the contract')
      assert.equal(await outbox.countDocuments({ _id: `${c.queue}:n-3` as never }), 0)
      assert.equal(await outbox.countDocuments({ _id: 'nobody:x' as never }), 1)
    })
  })

  describe('awaitOutcome', () => {
    it('returns the stored outcome as soon as the job completes, and undefined when time runs out', async () => {
      const c = echo()
      const results = sys.platform.db.collection<{ _id: string; doubled: number }>(`results_${c.queue}`)
      await sys.platform.queues.listen(c.queue)
      const read = (n: number) => async () => (await results.findOne({ _id: `n-${n}` })) ?? undefined

      // No worker yet: the wait ends empty-handed at its bound.
      await enqueue(sys.platform, c, { n: 1 })
      assert.equal(await awaitOutcome(sys.platform, { queue: c.queue, jobId: 'n-1', timeoutMs: 300, read: read(1) }), undefined)

      const processed: number[] = []
      workers.push(
        await registerWorker(
          sys.platform,
          defineJob(c, {
            async process({ n }, _job, platform) {
              processed.push(n)
              await platform.db.collection(`results_${c.queue}`).insertOne({ _id: `n-${n}` as never, doubled: 2 * n })
            },
          }),
        ),
      )
      const first = listenForOutcome(sys.platform, c.queue, 'n-21', 10_000)
      await enqueue(sys.platform, c, { n: 21 })
      const out = await awaitOutcome(sys.platform, { queue: c.queue, jobId: 'n-21', timeoutMs: 10_000, read: read(21), firstWait: first })
      assert.equal(out?.doubled, 42)
      assert.ok(processed.includes(21))
    })
  })

  describe('wake messages', () => {
    it('carry the queue, the job id and the payload as they are; an earlier worker’s message (no payload) still reads', () => {
      const bytes = Buffer.from([0x0a, 0x00, 0xff, 0x0a])
      assert.deepEqual(parseWake(wakeMessage('invoice-render', 'abc', bytes)), { queue: 'invoice-render', jobId: 'abc', payload: bytes })
      assert.deepEqual(parseWake(wakeMessage('invoice-render', 'abc')), { queue: 'invoice-render', jobId: 'abc' })
      assert.deepEqual(parseWake(Buffer.from('invoice-render\nabc')), { queue: 'invoice-render', jobId: 'abc' }, 'the earlier form')
      for (const bad of ['', 'no-newline', '\nabc', 'q\n', 'q\n\npayload']) assert.equal(parseWake(Buffer.from(bad)), null, JSON.stringify(bad))
    })
  })

  describe('waking the process that waits', () => {
    it('a job enqueued to be awaited names this process’s wake channel, and its worker wakes this process alone, done or failed', async () => {
      const c = echo()
      // A process that does not listen for wakes enqueues plain jobs.
      const plain = await enqueueAwaited(sys.platform, c, { n: 1 })
      assert.deepEqual(plain.data, { n: 1 })

      await sys.platform.queues.listenForWakes()
      const channel = sys.platform.queues.wakeChannel()
      assert.ok(channel?.startsWith(`${sys.platform.config.QUEUE_PREFIX}:wake:`), channel)
      // Another process that waits for jobs of its own (its own channel), on the same Redis.
      const other = new QueueRegistry(sys.platform.redisUrl, sys.platform.config.QUEUE_PREFIX, sys.platform.redis)
      // Two services of one process start side by side: the second caller, too, returns only once
      // the one subscription is in place.
      const first = other.listenForWakes()
      await other.listenForWakes()
      const [, subscribers] = (await sys.platform.redis.call('PUBSUB', 'NUMSUB', other.wakeChannel()!)) as [string, number]
      assert.equal(subscribers, 1)
      await first
      assert.notEqual(other.wakeChannel(), channel)
      try {
        const results = sys.platform.db.collection(`results_${c.queue}`)
        workers.push(
          await registerWorker(
            sys.platform,
            defineJob(c, {
              async process({ n }, job) {
                if (n === 13) throw new Error('unlucky')
                await results.insertOne({ _id: `n-${n}` as never, doubled: 2 * n })
                // What the waiter would read, handed over with the wake: binary, any size up to the cap.
                if (n === 3) wakeWith(job, Buffer.from([0x0a, 0x00, 0xff, 0x41]))
                if (n === 4) wakeWith(job, Buffer.alloc(WAKE_PAYLOAD_MAX, 7))
                if (n === 5) wakeWith(job, Buffer.alloc(WAKE_PAYLOAD_MAX + 1, 7))
                if (n === 6) wakeWith(job, Buffer.from('six'))
              },
            }),
          ),
        )
        // No QueueEvents stream for this queue: only the wake can settle these waits before their bound.
        const done = sys.platform.queues.nextSettled(c.queue, 'n-2', 30_000)
        const failed = sys.platform.queues.nextSettled(c.queue, 'n-13', 30_000)
        const elsewhere = other.nextSettled(c.queue, 'n-2', 2_000)
        const [withBytes, atCap, overCap] = [3, 4, 5].map((n) => sys.platform.queues.nextSettled(c.queue, `n-${n}`, 30_000))
        const job = await enqueueAwaited(sys.platform, c, { n: 2 })
        assert.equal(job.data[WAKE_FIELD], channel)
        await enqueueAwaited(sys.platform, c, { n: 13 })
        assert.deepEqual(await done, { event: 'done' })
        assert.ok(await results.findOne({ _id: 'n-2' as never }), 'woken after the outcome was stored')
        assert.deepEqual(await failed, { event: 'done' }, 'a processor that throws wakes its waiter too')
        assert.equal(await elsewhere, null, 'another process is not woken')
        for (const n of [3, 4, 5]) await enqueueAwaited(sys.platform, c, { n })
        assert.deepEqual(await withBytes, { event: 'done', payload: Buffer.from([0x0a, 0x00, 0xff, 0x41]) }, 'bytes handed over with the wake arrive as they are')
        const big = await atCap
        assert.equal(big?.event === 'done' && big.payload?.length, WAKE_PAYLOAD_MAX)
        assert.deepEqual(await overCap, { event: 'done' }, 'over the cap: a plain wake, the waiter reads the store')
        // awaitOutcome takes the outcome from the wake: this read never finds one.
        const six = listenForOutcome(sys.platform, c.queue, 'n-6', 30_000)
        await enqueueAwaited(sys.platform, c, { n: 6 })
        const read = async () => undefined
        assert.equal(await awaitOutcome(sys.platform, { queue: c.queue, jobId: 'n-6', timeoutMs: 30_000, firstWait: six, read, fromWake: (b) => b.toString() }), 'six')
      } finally {
        await other.close()
      }
    })
  })
})
