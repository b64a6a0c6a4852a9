// An endpoint's deliveries: each forwarded request with its state and every attempt (status,
// latency, the error or answer, the URL it went to: the target can change between attempts), filtered (failed, dead-lettered…), paged with "Load more"; a
// delivered or dead-lettered one can be retried (one more forward round), and all dead letters
// since a time recovered at once (the recovery runs as a job: its status is polled until done).
// The first page follows live events (endpoint-page.tsx); once more pages are open it waits for Refresh.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, reconnects, seg } from '../ui/api.ts'
import { FormError, SelectField, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice } from '../ui/page.tsx'
import { TableWrap } from '../ui/table.tsx'
import { toast } from '../ui/toasts.tsx'
import { say } from './say.ts'
import { localInputHoursAgo, localInputToIso, utc } from './time.tsx'
import type { Delivery, Endpoint, Recovery } from './types.ts'

const FILTERS = [
  { value: '', label: 'All forwards' },
  { value: 'failed', label: 'Failed (retrying or dead-lettered)' },
  { value: 'dead', label: 'Dead-lettered' },
  { value: 'retrying', label: 'Retrying' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'pending', label: 'Pending' },
  { value: 'paused', label: 'Held while paused' },
]
const STATUS_TEXT: Record<string, string> = { pending: 'pending', retrying: 'retrying', delivered: 'delivered', dead: 'dead-lettered', paused: 'held (paused)' }
const PILL: Record<string, string> = { delivered: 'on', dead: 'bad-pill', retrying: 'warn-pill', paused: 'warn-pill', pending: 'off' }
const PAGE = 20

/** `activity` moves with each burst of live events: the first page is read again (not when more pages are open). */
export function Deliveries(props: { ep: Endpoint; paid: boolean; activity: number; onChange: () => void }) {
  const { ep } = props
  const base = `/api/v1/endpoints/${seg(ep.endpoint_id)}`
  const [filter, setFilter] = useState('')
  const [items, setItems] = useState<Delivery[] | null>(null)
  const [next, setNext] = useState<number | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [retrying, setRetrying] = useState<number | null>(null)
  const gen = useRef(0)

  const load = async (before?: number) => {
    const mine = ++gen.current
    try {
      const q = new URLSearchParams({ limit: String(PAGE) })
      if (filter) q.set('status', filter)
      if (before) q.set('before', String(before))
      const r = await api<{ deliveries: Delivery[]; next_before: number | null }>('GET', `${base}/deliveries?${q}`)
      if (mine !== gen.current) return
      setItems((old) => (before && old ? [...old, ...r.data.deliveries] : r.data.deliveries))
      setNext(r.data.next_before)
      setError(null)
    } catch (e) {
      if (mine === gen.current) setError(say(e))
    }
  }
  useEffect(() => void load(), [filter, ep.endpoint_id, reconnects.value])
  const paged = !!items && items.length > PAGE
  useEffect(() => {
    if (props.activity && !paged) void load()
  }, [props.activity])

  const retry = async (d: Delivery) => {
    setRetrying(d.id)
    try {
      await api('POST', `${base}/requests/${d.id}/retry`)
      toast(`Request #${d.id} sent again`)
      await load()
      props.onChange()
    } catch (e) {
      toast(say(e), 'error')
    } finally {
      setRetrying(null)
    }
  }

  return (
    <section aria-labelledby="deliveries-title">
      <div class="page-head">
        <h2 id="deliveries-title">Deliveries</h2>
        <button type="button" onClick={() => void load()}>
          Refresh deliveries
        </button>
      </div>
      <div class="filters">
        <SelectField id="delivery-filter" label="Show" value={filter} options={FILTERS} onValue={(v) => (setItems(null), setFilter(v))} />
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      {!items && !error && <p>Loading…</p>}
      {items && items.length === 0 && <p class="muted">No forward matches.</p>}
      {items && items.length > 0 && (
        <TableWrap label="Deliveries">
          <table class="deliveries">
            <caption>Newest first{filter ? `, ${FILTERS.find((f) => f.value === filter)!.label.toLowerCase()}` : ''}</caption>
            <thead>
              <tr>
                <th scope="col">Request</th>
                <th scope="col">State</th>
                <th scope="col">Attempts</th>
                <th scope="col">Action</th>
              </tr>
            </thead>
            <tbody>
              {items.map((d) => (
                <tr key={d.id} data-request={d.id}>
                  <th scope="row">
                    <span class="mono">#{d.id}</span> {d.method} <span class="mono path">{d.path.replace(`/hook/${ep.endpoint_id}`, '') || '/'}</span>
                    <br />
                    <span class="muted">
                      received <Time iso={utc(d.received_at)} />, {d.size_bytes} B
                    </span>
                  </th>
                  <td>
                    <span class={`pill ${PILL[d.forward.status] ?? ''}`}>{STATUS_TEXT[d.forward.status] ?? d.forward.status}</span>
                    {d.forward.status === 'dead' && d.forward.last_error && d.forward.last_error !== d.attempts.at(-1)?.error && (
                      <>
                        <br />
                        <span class="muted dead-reason">{d.forward.last_error}</span>
                      </>
                    )}
                    {d.forward.next_attempt_at && (
                      <>
                        <br />
                        <span class="muted">
                          next attempt <Time iso={utc(d.forward.next_attempt_at)} />
                        </span>
                      </>
                    )}
                  </td>
                  <td>
                    <ol class="attempts">
                      {d.attempts.map((a) => (
                        <li key={`${a.round}-${a.attempt}`} class={a.ok ? 'ok' : 'failed'}>
                          {a.round > 0 ? `retry ${a.round}, ` : ''}attempt {a.attempt}: <strong>{a.status ?? 'no answer'}</strong>
                          {a.latency_ms !== null && ` in ${a.latency_ms} ms`}
                          {a.error && ` — ${a.error}`} (<Time iso={utc(a.at)} />)
                          {a.url && (
                            <>
                              <br />
                              <span class="muted attempt-url">to {a.url}</span>
                            </>
                          )}
                        </li>
                      ))}
                      {d.attempts.length === 0 && <li class="muted">none yet</li>}
                    </ol>
                  </td>
                  <td>
                    {props.paid && (d.forward.status === 'dead' || d.forward.status === 'delivered') ? (
                      <button type="button" class="small" disabled={retrying === d.id} onClick={() => retry(d)} aria-label={`Retry request #${d.id}`}>
                        Retry
                      </button>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {next !== null && (
        <p>
          <button type="button" onClick={() => void load(next)}>
            Load more
          </button>
        </p>
      )}
      {props.paid && ep.forward_url && <Recover base={base} onDone={() => (void load(), props.onChange())} />}
    </section>
  )
}

function Recover(props: { base: string; onDone: () => void }) {
  const [since, setSince] = useState(() => localInputHoursAgo(24))
  const [error, setError] = useState<string | null>(null)
  const [rec, setRec] = useState<Recovery | null>(null)
  const [busy, setBusy] = useState(false)
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useEffect(() => () => clearTimeout(timer.current), [])

  const poll = async (url: string) => {
    try {
      const r = await api<Recovery>('GET', url)
      setRec({ ...r.data, status_url: url })
      if (r.data.status === 'done') {
        setBusy(false)
        toast(`Recovery done: ${r.data.resent} dead-lettered request${r.data.resent === 1 ? '' : 's'} sent again`)
        props.onDone()
        return
      }
    } catch (e) {
      setError(say(e))
      setBusy(false)
      return
    }
    timer.current = setTimeout(() => void poll(url), 1000)
  }

  return (
    <form
      class="card"
      aria-labelledby="recover-title"
      onSubmit={async (e) => {
        e.preventDefault()
        const iso = localInputToIso(since)
        if (!iso) return setError('Enter a date and time')
        setError(null)
        setBusy(true)
        try {
          const r = await api<Recovery>('POST', `${props.base}/recoveries`, { body: { since: iso } })
          setRec(r.data)
          void poll(r.data.status_url!)
        } catch (err) {
          setError(say(err))
          setBusy(false)
        }
      }}
    >
      <h3 id="recover-title">Recover dead letters</h3>
      <p class="hint">Sends every dead-lettered request captured since this time again (a new round of attempts each). Asking again for the same time shows the same recovery.</p>
      <div class="inline-fields">
        <TextField id="recover-since" label="Captured since (your local time)" type="datetime-local" required value={since} onValue={setSince} />
        <button type="submit" class="primary" disabled={busy}>
          Recover dead letters
        </button>
      </div>
      <FormError error={error} />
      {rec && (
        <p role="status" class="recovery-status">
          Recovery {rec.status === 'done' ? 'done' : rec.status}: {rec.resent} of {rec.total ?? '…'} sent again
          {rec.finished_at && (
            <>
              {' '}
              (finished <Time iso={utc(rec.finished_at)} />)
            </>
          )}
        </p>
      )}
    </form>
  )
}
