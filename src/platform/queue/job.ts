// The platform's job API. A job contract (queue, payload schema, options, id scheme) is owned by
// the domain that produces the job and imported by both sides: producers enqueue through
// enqueue()/enqueueMany() here, and a processor in jobs/ pairs the contract with its work
// (defineJob). The worker registry validates the payload again with the same schema.
import type { Job, JobsOptions } from 'bullmq'
import { UnrecoverableError } from 'bullmq'
import type { z } from 'zod'
import type { Config } from '../config.ts'
import type { Platform } from '../platform.ts'
import { WAKE_FIELD } from './queues.ts'

export interface JobContract<S extends z.ZodType = z.ZodType> {
  /** Queue name, one job kind per queue (docs/architecture.md, "Adding a job"). */
  queue: string
  /** Payload schema, checked by the producer before enqueueing and by the worker before processing. */
  schema: S
  /** Options for every job of this kind (attempts, backoff, priority...). */
  options?: JobsOptions
  /**
   * The job id for a payload, when the job has a natural one: it is the idempotency key (a second
   * enqueue of the same id adds nothing) and what waiters and the outbox look the job up by.
   */
  id?(payload: z.infer<S>): string
}

export function defineJobContract<S extends z.ZodType>(contract: JobContract<S>): JobContract<S> {
  return contract
}

/** The worker side of a job: what runs it, how many at once, and whether it repeats. */
export interface JobProcessor<S extends z.ZodType = z.ZodType> {
  /** Default worker concurrency for this queue (overridable per process), fixed or from the config. */
  concurrency?: number | ((config: Config) => number)
  /**
   * This queue's job lock, when JOB_LOCK_MS does not suit it. A lock is renewed from the worker's
   * event loop, so a process starved of CPU longer than about half its lock loses it and the job
   * runs twice; a queue whose jobs are guarded otherwise (a lease) can afford a longer lock.
   */
  lockMs?: (config: Config) => number
  /** Repeatable work: a job scheduler upserted when a worker for this queue starts. */
  scheduler?: { id: string; every?: number; pattern?: string; payload: z.infer<S> }
  process(payload: z.infer<S>, job: Job, platform: Platform): Promise<unknown>
  /**
   * Make the first job as fast as the next (start threads, load fonts): awaited before the worker
   * process announces that it consumes this queue (consumers.ts), so "ready" means served at speed.
   */
  warmUp?(platform: Platform): Promise<void>
}

export type JobDefinition<S extends z.ZodType = z.ZodType> = JobContract<S> & JobProcessor<S>

/** Pair a domain's contract with its processor (jobs/ holds one per file). */
export function defineJob<S extends z.ZodType>(contract: JobContract<S>, processor: JobProcessor<S>): JobDefinition<S> {
  return { ...contract, ...processor }
}

/** Wake payloads handed over by processors, until the registry publishes the job's wake. */
const wakePayloads = new WeakMap<Job, Buffer>()

/**
 * Hand the process awaiting `job` its outcome with the wake (workers.ts), so it need not read it
 * back from MongoDB: a processor calls it once the outcome is stored, and only with what the
 * waiter would otherwise read (a single invoice's PDF). Kept out of the job's return value, which
 * BullMQ keeps in Redis. Payloads over WAKE_PAYLOAD_MAX are not sent: the waiter reads the store.
 */
export function wakeWith(job: Job, payload: Buffer): void {
  if (payload.length <= WAKE_PAYLOAD_MAX) wakePayloads.set(job, payload)
}

/** A wake is one Redis PUBLISH (to every node of a cluster): large outcomes are read instead. */
export const WAKE_PAYLOAD_MAX = 512 * 1024

/** The payload wakeWith handed over for `job`, once (workers.ts). */
export function takeWakePayload(job: Job): Buffer | undefined {
  const p = wakePayloads.get(job)
  wakePayloads.delete(job)
  return p
}

/** What enqueueMany takes per job. */
export interface JobEntry<S extends z.ZodType> {
  payload: z.infer<S>
  opts?: JobsOptions
}

/** BullMQ's addBulk is one MULTI: keep each bounded. */
const BULK_SIZE = 500

function prepare<S extends z.ZodType>(contract: JobContract<S>, payload: z.infer<S>, opts: JobsOptions = {}) {
  const data = contract.schema.parse(payload)
  const jobId = opts.jobId ?? contract.id?.(data)
  return { name: contract.queue, data, opts: { ...contract.options, ...opts, ...(jobId === undefined ? {} : { jobId }) } }
}

/**
 * Add one job that a request of this process will wait for (await-outcome.ts): its data names this
 * process's wake channel, so the worker wakes this process alone when the job is done (queues.ts).
 * Without a wake channel (a process that does not listen for wakes) it is a plain enqueue.
 */
export async function enqueueAwaited<S extends z.ZodType>(platform: Platform, contract: JobContract<S>, payload: z.infer<S>): Promise<Job> {
  const { name, data, opts } = prepare(contract, payload)
  const channel = platform.queues.wakeChannel()
  return platform.queues.queue(contract.queue).add(name, channel ? { ...(data as object), [WAKE_FIELD]: channel } : data, opts)
}

/** Add one job. Throws when Redis is unreachable: callers that must not lose it use the outbox. */
export async function enqueue<S extends z.ZodType>(
  platform: Platform,
  contract: JobContract<S>,
  payload: z.infer<S>,
  opts: JobsOptions = {},
): Promise<Job> {
  const { name, data, opts: jobOpts } = prepare(contract, payload, opts)
  return platform.queues.queue(contract.queue).add(name, data, jobOpts)
}

/** Add many jobs of one kind, in bounded bulk commands. Ids make a repeated call add nothing new. */
export async function enqueueMany<S extends z.ZodType>(platform: Platform, contract: JobContract<S>, entries: JobEntry<S>[]): Promise<Job[]> {
  const queue = platform.queues.queue(contract.queue)
  const jobs = entries.map((e) => prepare(contract, e.payload, e.opts))
  const added: Job[] = []
  for (let i = 0; i < jobs.length; i += BULK_SIZE) added.push(...(await queue.addBulk(jobs.slice(i, i + BULK_SIZE))))
  return added
}

/** Throw for failures that retrying cannot fix (bad input): BullMQ skips remaining attempts. */
export class PermanentJobError extends UnrecoverableError {}
