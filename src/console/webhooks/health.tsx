// How an endpoint's forwarding reads at a glance: its target, the success rate of the last
// attempts, the last error and the dead letters, and whether it is paused.
import { Time } from '../ui/format.tsx'
import { utc } from './time.tsx'
import type { Endpoint } from './types.ts'

export function rate(h: NonNullable<Endpoint['forward_health']>): string {
  if (h.success_rate === null) return 'no attempt yet'
  return `${Math.round(h.success_rate * 100)} % of the last ${h.attempts} attempts succeeded`
}

export function ForwardState(props: { ep: Endpoint }) {
  const { ep } = props
  if (!ep.forward_url) return <span class="pill off">not forwarded</span>
  if (ep.forward_paused) return <span class="pill warn-pill">paused</span>
  const h = ep.forward_health
  const failing = !!h && h.success_rate !== null && h.success_rate < 1 && h.last_error && (!h.last_success_at || h.last_error.at >= h.last_success_at)
  return failing ? <span class="pill bad-pill">failing</span> : <span class="pill on">forwarding</span>
}

export function Health(props: { ep: Endpoint }) {
  const { ep } = props
  const h = ep.forward_health
  if (!ep.forward_url || !h) return <span class="muted">—</span>
  return (
    <div class="health">
      <code class="target">{ep.forward_url}</code>
      <span>{rate(h)}</span>
      {h.last_error && (
        <span class="last-error">
          Last error: {h.last_error.message} (<Time iso={utc(h.last_error.at)} />)
        </span>
      )}
      {h.dead_lettered > 0 && (
        <span class="dead-count">
          {h.dead_lettered} dead-lettered
        </span>
      )}
    </div>
  )
}

/** 300000 → "5 min". */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)} s`
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)} min`
  return `${+(ms / 3_600_000).toFixed(1)} h`
}

/** The retry schedule in words: [0, 5000, 300000] → "3 attempts: the first after 0 ms, then 5 s and 5 min after each failure". */
export function scheduleText(s: number[]): string {
  const [first, ...rest] = s
  const start = first === 0 ? 'the first at once' : `the first after ${duration(first!)}`
  const then = rest.length ? `, then after each failure ${rest.map(duration).join(', ')}` : ''
  return `${s.length} attempt${s.length === 1 ? '' : 's'}: ${start}${then}; after the last failure the request is dead-lettered. A Retry is one more attempt.`
}
