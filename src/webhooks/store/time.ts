// Webhook-service timestamps: ISO 8601 in UTC *without* a zone designator, as the spec shows
// (`2026-11-21T09:15:02.123`); other services keep the `Z`.
export function wireTime(d: Date): string
export function wireTime(d: Date | null | undefined): string | null
export function wireTime(d: Date | null | undefined): string | null {
  return d ? d.toISOString().slice(0, 23) : null
}

/** Seconds until the next UTC midnight (Retry-After of the daily limit). */
export function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000))
}
