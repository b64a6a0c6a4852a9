// Flag-service plan limits added after the seed (segments and environments per project). Kept here rather than in
// the platform's FLAGS_LIMITS, whose contents the seed's signup answer (`limits`) prints as they are.
import { HttpError } from '../platform/http/errors.ts'
import type { Plan } from '../platform/plans.ts'

export const SEGMENT_LIMITS: Record<Plan, number> = { free: 5, starter: 25, pro: 100, business: 500 }

export function segmentLimit(plan: Plan): HttpError {
  const max = SEGMENT_LIMITS[plan]
  return new HttpError(403, `Plan limit reached: the ${plan} plan allows ${max} segments per project`, {}, { limit: 'segments_per_project', max, plan })
}

/** Environments per project, production included. */
export const ENVIRONMENT_LIMITS: Record<Plan, number> = { free: 2, starter: 3, pro: 5, business: 10 }

export function environmentLimit(plan: Plan): HttpError {
  const max = ENVIRONMENT_LIMITS[plan]
  return new HttpError(403, `Plan limit reached: the ${plan} plan allows ${max} environments per project`, {}, { limit: 'environments_per_project', max, plan })
}

/** Days the audit history (and the webhook delivery log) is kept. */
export const HISTORY_RETENTION_DAYS: Record<Plan, number> = { free: 7, starter: 30, pro: 90, business: 365 }

/** Flag-change webhooks per project. */
export const WEBHOOK_LIMITS: Record<Plan, number> = { free: 2, starter: 10, pro: 25, business: 100 }

export function webhookLimit(plan: Plan): HttpError {
  const max = WEBHOOK_LIMITS[plan]
  return new HttpError(403, `Plan limit reached: the ${plan} plan allows ${max} webhooks per project`, {}, { limit: 'webhooks_per_project', max, plan })
}
