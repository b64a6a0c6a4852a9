// How times and values read in the console: relative for recent times ("3 min ago") with the
// exact UTC time in the element's datetime/title, JSON values compact.
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never'
  const s = Math.round((now - Date.parse(iso)) / 1000)
  if (s < 45) return 'just now'
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`
  return `${Math.round(s / 86400)} days ago`
}

export function exact(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/Z$/, ' UTC')
}

export function Time(props: { iso: string | null | undefined }) {
  if (!props.iso) return <span>never</span>
  return (
    <time dateTime={props.iso} title={exact(props.iso)}>
      {ago(props.iso)}
    </time>
  )
}

export function showValue(v: unknown): string {
  if (v === undefined) return '—'
  if (typeof v === 'string') return v
  return JSON.stringify(v)
}
