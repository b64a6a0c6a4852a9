// Request schemas of the billing routes.
import { z } from 'zod'
import { PAID_PLANS } from '../plans.ts'

/** Seeded message (docs/billing.md): used for a missing, mistyped or unknown plan alike. */
export const INVALID_PLAN = 'Invalid plan. Must be one of: starter, pro, business'

export const checkoutSchema = z.object({
  body: z.object({ plan: z.enum(PAID_PLANS, { error: INVALID_PLAN }) }, { error: INVALID_PLAN }),
})
