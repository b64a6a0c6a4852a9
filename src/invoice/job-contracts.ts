// The invoice domain's job contracts: queue names, payload schemas, options and job ids, shared by
// the producers here (routes, batch progress) and the processors in jobs/.
import { z } from 'zod'
import { defineJobContract } from '../platform/queue/job.ts'
import { invoiceRequestShape } from './invoice-schema.ts'

/** One single or demo invoice rendered into a PDF; the job id is the invoice id. */
export const invoiceRenderContract = defineJobContract({
  queue: 'invoice-render',
  schema: z.object({
    invoice_id: z.string().min(1).max(64),
    /**
     * The request as stored, when the producer has it at hand (single and demo invoices): the worker
     * then skips reading it back, a round trip on the latency path of POST /invoice. MongoDB stays
     * the source of truth for the invoice's state; a job without it reads it back.
     *
     * Checked here for its shape (every field, its type and bounds), not again for the cross-field
     * rules: the one producer is this service's ingress, which parsed it with invoiceBodySchema just
     * before. Those rules cost three times the shape on either side of the queue (measured with
     * zod 4: 20 lines 31 µs against 14 µs, 1,000 lines 1.3 ms against 0.42 ms; the API process
     * spends about 7 ms per 20-line invoice, docs/benchmarks.md).
     */
    request: invoiceRequestShape.optional(),
    /**
     * Who the invoice is for, when nothing is stored before the render (every single and demo
     * invoice since the record-once path): the worker records the invoice with its PDF, in one
     * write. A job without it (enqueued by an earlier version, or put back from a stored row)
     * renders the stored invoice.
     */
    record: z
      .object({
        account_id: z.string().min(1).max(64).nullable(),
        kind: z.enum(['single', 'demo']),
        period: z.string().regex(/^\d{4}-\d{2}$/).nullable(),
        created_at: z.iso.datetime(),
      })
      .optional(),
  }),
  options: { attempts: 3, backoff: { type: 'exponential', delay: 500 } },
  id: (p) => p.invoice_id,
})
export type InvoiceRenderPayload = z.infer<typeof invoiceRenderContract.schema>

/**
 * Rows per batch render job. Larger chunks mean fewer writes per row (four per chunk) but coarser
 * progress and more work redone after a worker dies mid-chunk; 20 rows is about 0.2 s of rendering.
 */
export const BATCH_CHUNK_ROWS = 20

/** A chunk's job id: stable, so enqueueing a chunk twice adds it once. */
export const chunkJobId = (batchId: string, from: number) => `${batchId}-${from}`

/**
 * One chunk of a batch's rows (BATCH_CHUNK_ROWS consecutive rows). A queue of its own, so single
 * invoices always have worker slots of their own and never wait behind a batch.
 */
export const invoiceBatchRenderContract = defineJobContract({
  queue: 'invoice-batch-render',
  schema: z
    .object({
      batch_id: z.string().min(1).max(64),
      from: z.number().int().min(0),
      to: z.number().int().min(1),
    })
    .refine((c) => c.to > c.from, 'to must be greater than from'),
  options: { attempts: 3, backoff: { type: 'exponential', delay: 500 } },
  id: (c) => chunkJobId(c.batch_id, c.from),
})
export type InvoiceBatchRenderPayload = z.infer<typeof invoiceBatchRenderContract.schema>

/** How often a batch's watcher looks at it. */
export const BATCH_WATCH_INTERVAL_MS = 500

/** One per batch, created with it: drives the batch to its end (batch-progress.ts). */
export const invoiceBatchWatchContract = defineJobContract({
  queue: 'invoice-batch-watch',
  schema: z.object({ batch_id: z.string().min(1).max(64) }),
  // Retries cover Redis/Mongo hiccups; the look itself is idempotent.
  options: { attempts: 20, backoff: { type: 'exponential', delay: 1_000 } },
  id: (p) => p.batch_id,
})

/** A finished batch's signed completion webhook: exponential from 2 s over 8 attempts (≈ 4 minutes). */
export const invoiceBatchCallbackContract = defineJobContract({
  queue: 'invoice-batch-callback',
  schema: z.object({ batch_id: z.string().min(1).max(64) }),
  options: { attempts: 8, backoff: { type: 'exponential', delay: 2_000 } },
  id: (p) => p.batch_id,
})

/** Hourly removal of stored invoices, batches and Idempotency-Keys past retention. */
export const invoicesExpireContract = defineJobContract({ queue: 'invoices-expire', schema: z.object({}) })

/** Failing single invoices whose waiting request was abandoned (a scheduler, every 30 s). */
export const invoicesAbandonedContract = defineJobContract({ queue: 'invoices-abandoned', schema: z.object({}) })

/** Monthly pruning of usage counters older than a year. */
export const usageResetContract = defineJobContract({ queue: 'usage-reset', schema: z.object({}) })

export const invoiceJobContracts = [
  invoiceRenderContract,
  invoiceBatchRenderContract,
  invoiceBatchWatchContract,
  invoiceBatchCallbackContract,
  invoicesExpireContract,
  invoicesAbandonedContract,
  usageResetContract,
]
