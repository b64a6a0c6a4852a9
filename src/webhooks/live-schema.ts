// Request schemas of the live routes (live-routes.ts): the event stream and the `listen` CLI's
// report of what its local target answered.
import { z } from 'zod'

const tokenParams = z.object({ token: z.string() })

export const streamSchema = z.object({
  params: tokenParams,
  query: z.object({
    /** Same as the Last-Event-ID header, for clients that cannot set headers on a reconnect. */
    last_event_id: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  }),
})

export const localDeliverySchema = z.object({
  params: z.object({ token: z.string(), id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }),
  body: z
    .object({
      url: z.string().min(1).max(2_048),
      status: z.number().int().min(100).max(999).nullable(),
      latency_ms: z.number().int().min(0).max(86_400_000),
      body_preview: z.string().max(1_024).default(''),
      error: z.string().max(500).nullable().default(null),
    })
    .strict(),
})
