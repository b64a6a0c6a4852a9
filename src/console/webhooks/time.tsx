// The API's times are UTC without a zone designator ("2026-11-28T09:15:02.123"): read as UTC here,
// whatever the browser's zone, and shown relative with the exact UTC time beside it.
import { exact } from '../ui/format.tsx'

export const utc = (s: string | null | undefined): string | null => (s ? (/[zZ]|[+-]\d\d:\d\d$/.test(s) ? s : `${s}Z`) : null)

/** A datetime-local value ("2026-11-28T09:15") read in the browser's zone, as the ISO time the API takes. */
export function localInputToIso(v: string): string | null {
  const ms = Date.parse(v)
  return Number.isNaN(ms) ? null : new Date(ms).toISOString()
}

/** Now minus `hours`, as a datetime-local value in the browser's zone. */
export function localInputHoursAgo(hours: number, now = Date.now()): string {
  const d = new Date(now - hours * 3_600_000)
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** A time to come ("in 6 days"), with the exact UTC time as its title. */
export function Until(props: { iso: string }) {
  const s = Math.round((Date.parse(props.iso) - Date.now()) / 1000)
  const text = s <= 0 ? 'now' : s < 90 * 60 ? `in ${Math.max(1, Math.round(s / 60))} min` : s < 36 * 3600 ? `in ${Math.round(s / 3600)} h` : `in ${Math.round(s / 86400)} days`
  return (
    <time dateTime={props.iso} title={exact(props.iso)}>
      {text}
    </time>
  )
}
