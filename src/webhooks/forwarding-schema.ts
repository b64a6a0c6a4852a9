// Request schemas of the forwarding controls (forwarding-routes.ts): pause/resume and bulk recovery.
import { z } from 'zod'
import { isoTime } from './search/search.ts'

export const forwardingSchema = z.object({ params: z.object({ token: z.string() }) })

export const recoverSchema = z.object({
  params: z.object({ token: z.string() }),
  body: z.object({ since: isoTime('since').unwrap() }).strict(),
})

export const recoveryStatusSchema = z.object({ params: z.object({ token: z.string(), id: z.string().max(120) }) })
