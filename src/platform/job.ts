// What a job is: a queue, a payload schema shared by producer and worker, options, a processor.
// Producers call enqueue(); the worker registry validates the payload again before processing.
import type { Job, JobsOptions } from 'bullmq'
import { UnrecoverableError } from 'bullmq'
import type { z } from 'zod'
import type { Config } from './config.ts'
import type { Platform } from './platform.ts'
import type { QueueName } from './queue-names.ts'

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  queue: QueueName
  schema: S
  /** Options for every job of this kind (attempts, backoff, priority...). */
  options?: JobsOptions
  /** Default worker concurrency for this queue (overridable per process), fixed or from the config. */
  concurrency?: number | ((config: Config) => number)
  /** Repeatable work: a job scheduler upserted when a worker for this queue starts. */
  scheduler?: { id: string; every?: number; pattern?: string; payload: z.infer<S> }
  process(payload: z.infer<S>, job: Job, platform: Platform): Promise<unknown>
}

export function defineJob<S extends z.ZodType>(def: JobDefinition<S>): JobDefinition<S> {
  return def
}

export async function enqueue<S extends z.ZodType>(
  platform: Platform,
  def: JobDefinition<S>,
  payload: z.infer<S>,
  opts: JobsOptions = {},
): Promise<Job> {
  const data = def.schema.parse(payload)
  return platform.queues.queue(def.queue).add(def.queue, data, { ...def.options, ...opts })
}

/** Throw for failures that retrying cannot fix (bad input): BullMQ skips remaining attempts. */
export class PermanentJobError extends UnrecoverableError {}
