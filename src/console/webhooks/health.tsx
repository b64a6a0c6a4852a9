// How an endpoint's forwarding reads at a glance: its target, the success rate of the last
// attempts, the last error and the dead letters, and whether it is paused.
import { Time } from '../ui/format.tsx'
import { utc } from './time.ts'
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
