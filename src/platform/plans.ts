// Plans and limits of every service (docs/billing.md, "Plans and limits"). The single table the
// code reads limits from.
export type Service = 'invoice' | 'flags' | 'webhooks'
export type Plan = 'free' | 'starter' | 'pro' | 'business'
export const PLANS: Plan[] = ['free', 'starter', 'pro', 'business']
export const PAID_PLANS = ['starter', 'pro', 'business'] as const
export type PaidPlan = (typeof PAID_PLANS)[number]

export const PRICES_USD: Record<Service, Record<Plan, number>> = {
  invoice: { free: 0, starter: 9, pro: 19, business: 39 },
  flags: { free: 0, starter: 9, pro: 29, business: 49 },
  webhooks: { free: 0, starter: 9, pro: 19, business: 39 },
}

export const INVOICE_LIMITS: Record<Plan, { monthly_limit: number }> = {
  free: { monthly_limit: 5 },
  starter: { monthly_limit: 100 },
  pro: { monthly_limit: 1_000 },
  business: { monthly_limit: 10_000 },
}

export const FLAGS_LIMITS: Record<Plan, { projects: number; flags_per_project: number; evaluations_per_second: number }> = {
  free: { projects: 2, flags_per_project: 20, evaluations_per_second: 20 },
  starter: { projects: 10, flags_per_project: 200, evaluations_per_second: 200 },
  pro: { projects: 50, flags_per_project: 1_000, evaluations_per_second: 1_000 },
  business: { projects: 200, flags_per_project: 5_000, evaluations_per_second: 5_000 },
}

export const WEBHOOKS_LIMITS: Record<
  Plan,
  { endpoints: number; requests_per_day: number; retention_hours: number; forwarding: boolean; endpoint_lifetime_days: number | null }
> = {
  free: { endpoints: 2, requests_per_day: 100, retention_hours: 24, forwarding: false, endpoint_lifetime_days: 7 },
  starter: { endpoints: 10, requests_per_day: 10_000, retention_hours: 168, forwarding: true, endpoint_lifetime_days: null },
  pro: { endpoints: 50, requests_per_day: 100_000, retention_hours: 720, forwarding: true, endpoint_lifetime_days: null },
  business: { endpoints: 200, requests_per_day: 1_000_000, retention_hours: 2_160, forwarding: true, endpoint_lifetime_days: null },
}
