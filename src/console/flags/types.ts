// Shapes of the flags API's answers as the console reads them (docs/flags.md).
export type FlagType = 'boolean' | 'string' | 'number' | 'object'

export interface Project {
  id: string
  name: string
  sdk_key_hint: string
  flag_count: number
  /** ["*"]: any origin; []: no browser may evaluate (the CORS allow-list of the web provider). */
  allowed_origins?: string[]
  /** The version of name and allowed origins: sent as If-Match by the rename and the origins editor. */
  version?: number
  created_at: string
}

export interface Condition {
  attribute: string
  operator: string
  value: unknown
  case_insensitive?: boolean
  negate?: boolean
}

export interface Variant {
  name: string
  weight: number
  value: unknown
}

export interface Rule {
  conditions: Condition[]
  segments?: string[]
  value?: unknown
  variants?: Variant[]
  stickiness?: string
}

export interface Split {
  variants: Variant[]
  stickiness?: string
}

export interface Flag {
  key: string
  name: string
  enabled: boolean
  type?: FlagType
  default_value: unknown
  rules: Rule[]
  fallthrough?: Split
  tags?: string[]
  environment?: string
  version?: number
  last_evaluated_at?: string | null | Record<string, string | null>
  created_at: string
  updated_at: string
}

export interface Environment {
  name: string
  sdk_key_hint: string
  server_key_hint?: string | null
  created_at: string
}

export interface Segment {
  name: string
  description?: string
  conditions: Condition[]
  version?: number
}

export interface HistoryEntry {
  id: string
  type: string
  kind: string
  target: string
  environment: string | null
  at: string
  actor: { account_id: string; api_key?: { id: string; hint: string } | null; email?: string }
  before: any
  after: any
  changes: Array<{ op: string; path: string; value?: unknown; from?: string }>
}

export interface Webhook {
  id: string
  url: string
  environment: string
  /** null: every event. */
  events: string[] | null
  description: string
  enabled: boolean
  secret_hint: string
  secret?: string
  created_at: string
}

export interface Delivery {
  id: string
  change_id: string
  type: string
  state: 'pending' | 'delivered' | 'failed' | 'skipped'
  attempt_count: number
  last_status: number | null
  created_at: string
  updated_at: string
}

export interface Account {
  id: string
  email: string
  plan: string
}
