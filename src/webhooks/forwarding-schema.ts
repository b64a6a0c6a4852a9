// Request schemas of the forwarding controls (forwarding-routes.ts): pause/resume, bulk recovery
// and the deliveries listing.
import { z } from 'zod'
import { isoTime } from './search/search.ts'

export const forwardingSchema = z.object({ params: z.object({ token: z.string() }) })

export const recoverSchema = z.object({
  params: z.object({ token: z.string() }),
  body: z.object({ since: isoTime('since').unwrap() }).strict(),
})

/** Forward states, and `failed`: the last attempt failed (retrying or dead-lettered). */
export const DELIVERY_FILTERS = ['pending', 'retrying', 'delivered', 'dead', 'paused', 'failed'] as const

export const listDeliveriesSchema = z.object({
  params: z.object({ token: z.string() }),
  query: z.object({
    limit: z.coerce.number().int().min(1).max(100).default(20).describe('Forwarded requests per page (1–100, default 20).'),
    before: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().describe('The `next_before` of the previous page (a request id).'),
    status: z
      .enum(DELIVERY_FILTERS)
      .optional()
      .describe('Only forwards in this state; `failed` is `retrying` or `dead` (the last attempt failed), `dead` the dead-lettered ones.'),
  }),
})

export const recoveryStatusSchema = z.object({ params: z.object({ token: z.string(), id: z.string().max(120) }) })
