// The shapes of the webhook service's answers the console reads (docs/webhooks.md: "Endpoints"
// and "Console support"). Times come without a zone designator and are UTC (see time.ts).
export interface Account {
  id: string
  email: string
  plan: Plan
}

export type Plan = 'free' | 'starter' | 'pro' | 'business'

export interface AccountUsage {
  plan: Plan
  limits: { endpoints: number; requests_per_day: number; retention_hours: number }
  usage: { endpoints: number; requests_today: number }
}

export interface ForwardHealth {
  window: number
  attempts: number
  succeeded: number
  success_rate: number | null
  last_attempt_at: string | null
  last_success_at: string | null
  last_error: { message: string; status: number | null; at: string } | null
  dead_lettered: number
}

export interface Endpoint {
  endpoint_id: string
  url: string
  inspect_url: string
  name: string | null
  response_code: number
  response_body: string
  response_content_type: string
  forward_url: string | null
  forward_paused: boolean
  created_at: string
  expires_at: string | null
  request_count?: number
  captures_today: number
  last_request_at: string | null
  forward_health: ForwardHealth | null
  /** On GET /endpoints/{token} only: the delay before each automatic attempt (null without forwarding). */
  forward_schedule_ms?: number[] | null
}

export type ForwardStatus = 'pending' | 'retrying' | 'delivered' | 'dead' | 'paused'

export interface Attempt {
  attempt: number
  round: number
  url: string
  at: string
  status: number | null
  latency_ms: number | null
  ok: boolean
  error: string | null
}

export interface Delivery {
  id: number
  method: string
  path: string
  received_at: string
  size_bytes: number
  forward: { status: ForwardStatus; attempts: number; last_status: number | null; last_error: string | null; next_attempt_at: string | null; delivered_at: string | null }
  attempts: Attempt[]
}

export interface Recovery {
  recovery_id: string
  status: string
  since: string
  total: number | null
  resent: number
  created_at: string
  finished_at: string | null
  status_url?: string
}
