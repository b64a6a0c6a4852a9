// One endpoint: its capture URL, the link to its live inspection page, its settings (name,
// response, forward target: changed in place by "Edit settings", endpoint-settings.tsx, the capture
// URL staying the same), its forwarding (forwards carry the sender's own headers and signature, and
// no signature of this service; the retry schedule is the operator's, for every endpoint), pause /
// resume, delete, and the deliveries view (kept after forwarding stops, for the dead-lettered).
// It follows the endpoint's live stream: captures and attempts reload what they change, a settings
// change made elsewhere (another tab, a colleague, the API) shows at once, and a deletion made
// elsewhere replaces the page with a notice saying so.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, reconnects, seg } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { navigate } from '../ui/router.ts'
import { toast } from '../ui/toasts.tsx'
import { APP } from './app-name.ts'
import { Deliveries } from './deliveries.tsx'
import { live, watchEndpoint } from './live-activity.ts'
import { deleteEndpoint, label, setPaused, whatIsLost } from './endpoint-actions.ts'
import { EndpointSettings } from './endpoint-settings.tsx'
import { ForwardState, rate, scheduleText } from './health.tsx'
import { say } from './say.ts'
import { account } from './session.ts'
import { Until, utc } from './time.tsx'
import type { Endpoint } from './types.ts'

export function EndpointPage(props: { token: string }) {
  const [ep, setEp] = useState<Endpoint | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [confirmDelete, setConfirmDelete] = useState(false)
  const [deleteError, setDeleteError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [deleted, setDeleted] = useState(false)
  /** This page's own Delete is under way: its stream's deletion event is no news here. */
  const deletingHere = useRef(false)
  const loaded = useRef(false)
  const load = () =>
    api<Endpoint>('GET', `/api/v1/endpoints/${seg(props.token)}`)
      .then((r) => ((loaded.current = true), setEp(r.data), setError(null)))
      .catch((e) => {
        // Shown before and gone now: deleted while the stream was down (its event never came).
        if (loaded.current && e instanceof ApiError && e.status === 404 && !deletingHere.current) setDeleted(true)
        else setError(say(e))
      })
  useEffect(() => void load(), [props.token, reconnects.value])
  // Without a target now, the deliveries view stays while there are forwards of before to see.
  const [pastForwards, setPastForwards] = useState(false)
  const stopped = ep !== null && !ep.forward_url
  useEffect(() => {
    if (!stopped) return
    api<{ deliveries: unknown[] }>('GET', `/api/v1/endpoints/${seg(props.token)}/deliveries?limit=1`)
      .then((r) => setPastForwards(r.data.deliveries.length > 0))
      .catch(() => setPastForwards(false))
  }, [props.token, stopped, reconnects.value])
  // Captures and forward attempts as they happen: the counts, health and deliveries follow.
  const [activity, setActivity] = useState(0)
  useEffect(
    () =>
      watchEndpoint(props.token, {
        onActivity: () => (void load(), setActivity((n) => n + 1)),
        // The capture and inspection URLs stay as this browser reaches the service (the event's
        // were made for the request that changed the settings, which may have used another host).
        onSettings: (next) => setEp((old) => (old ? { ...next, url: old.url, inspect_url: old.inspect_url } : old)),
        onDeleted: () => {
          if (!deletingHere.current) setDeleted(true)
        },
      }),
    [props.token],
  )

  const crumbs = (
    <p class="crumbs">
      <a href="/endpoints">All endpoints</a>
    </p>
  )
  if (deleted)
    return (
      <Page title={ep ? label(ep) : 'Endpoint'} appName={APP}>
        {crumbs}
        <div class="deleted" role="alert">
          <h2>This endpoint was deleted</h2>
          <p>
            <strong>{ep ? label(ep) : props.token}</strong> no longer exists: it was deleted (in another tab, by someone else or through the API) with its captured requests.
            Its capture URL answers senders with 404 now.
          </p>
          <a href="/endpoints">Back to all endpoints</a>
        </div>
      </Page>
    )
  if (!ep)
    return (
      <Page title={error ? 'Endpoint' : 'Loading endpoint'} appName={APP}>
        {crumbs}
        {error ? <Notice kind="error">{error}</Notice> : <p>Loading…</p>}
      </Page>
    )
  const paid = account.value?.plan !== 'free'
  const h = ep.forward_health
  return (
    <Page
      title={label(ep)}
      appName={APP}
      actions={
        <>
          <a class="button" href={`/inspect/${seg(ep.endpoint_id)}`} target="_blank" rel="noopener">
            Open inspection page<span class="visually-hidden"> (live view, new tab)</span>
          </a>
          <EndpointSettings ep={ep} paid={paid} onSaved={(next) => (setEp({ ...ep, ...next }), void load())} />
          {ep.forward_url && paid && (
            <button
              type="button"
              onClick={async () => {
                try {
                  await setPaused(ep, !ep.forward_paused)
                  toast(`Forwarding ${ep.forward_paused ? 'resumed' : 'paused'}`)
                  await load()
                } catch (e) {
                  toast(say(e), 'error')
                }
              }}
            >
              {ep.forward_paused ? 'Resume forwarding' : 'Pause forwarding'}
            </button>
          )}
          <button type="button" class="danger" onClick={() => (setDeleteError(null), setConfirmDelete(true))}>
            Delete…
          </button>
        </>
      }
    >
      {crumbs}
      <p class="live-state muted">
        {live.value === 'open'
          ? 'Live: this page follows captures, forward attempts and changes to its settings as they happen.'
          : live.value === 'down'
            ? 'Not live right now: reconnecting ("Refresh deliveries" still works).'
            : 'Connecting to the live stream…'}
      </p>
      <h2>Capture URL</h2>
      <CopyBlock text={ep.url} what="capture URL" />
      <dl class="facts">
        <dt>Captured today</dt>
        <dd>{ep.captures_today}</dd>
        <dt>Last capture</dt>
        <dd>
          <Time iso={utc(ep.last_request_at)} />
        </dd>
        <dt>Stored</dt>
        <dd>
          {ep.request_count ?? 0} request{ep.request_count === 1 ? '' : 's'}
        </dd>
        <dt>Answers senders</dt>
        <dd>
          {ep.response_code} ({ep.response_content_type}){' '}
          <code class="response-body">{ep.response_body.length > 120 ? `${ep.response_body.slice(0, 120)}…` : ep.response_body || '(empty body)'}</code>
        </dd>
        <dt>Expires</dt>
        <dd>{ep.expires_at ? <Until iso={utc(ep.expires_at)!} /> : 'never (paid plans keep endpoints)'}</dd>
      </dl>
      <h2>Forwarding</h2>
      {!ep.forward_url ? (
        <p>
          Not forwarded: this endpoint only captures. {paid ? 'To forward its captures, set a "Forward to" URL in Edit settings (the capture URL stays the same).' : 'Forwarding needs a paid plan (see Account).'}
        </p>
      ) : (
        <dl class="facts forwarding">
          <dt>State</dt>
          <dd>
            <ForwardState ep={ep} />
          </dd>
          <dt>Target</dt>
          <dd>
            <code class="target">{ep.forward_url}</code> <span class="muted">(change it in Edit settings; attempts still owed go to the new target)</span>
          </dd>
          <dt>Health</dt>
          <dd>{h ? rate(h) : '—'}</dd>
          <dt>Last success</dt>
          <dd>
            <Time iso={utc(h?.last_success_at)} />
          </dd>
          <dt>Last error</dt>
          <dd>
            {h?.last_error ? (
              <>
                {h.last_error.message} (<Time iso={utc(h.last_error.at)} />)
              </>
            ) : (
              'none'
            )}
          </dd>
          <dt>Dead-lettered</dt>
          <dd>{h?.dead_lettered ?? 0}</dd>
          <dt>Signature</dt>
          <dd>Forwards carry the sender's own headers, its signature included, and a Queueworks-Delivery-Id header; this service adds no signature and holds no signing secret.</dd>
          <dt>Schedule</dt>
          <dd>
            <span id="schedule">{ep.forward_schedule_ms ? scheduleText(ep.forward_schedule_ms) : '—'}</span>{' '}
            <span class="muted">(the service's, set by its operator for every endpoint)</span>
          </dd>
        </dl>
      )}
      {ep.forward_url || pastForwards ? (
        <Deliveries ep={ep} paid={paid} activity={activity} onChange={() => void load()} />
      ) : (
        <>
          <h2>Deliveries</h2>
          <p class="muted">None: this endpoint does not forward. Its captures are on the inspection page.</p>
        </>
      )}
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${label(ep)}?`}
        confirmLabel="Delete endpoint for good"
        danger
        busy={busy}
        error={deleteError}
        onClose={() => setConfirmDelete(false)}
        onConfirm={async () => {
          setBusy(true)
          deletingHere.current = true
          try {
            const n = await deleteEndpoint(ep)
            toast(`${label(ep)} deleted with ${n} captured request${n === 1 ? '' : 's'}`)
            setConfirmDelete(false)
            navigate('/endpoints')
          } catch (e) {
            deletingHere.current = false
            // Someone else deleted it first: say that, not a bare "not found".
            if (e instanceof ApiError && e.status === 404) (setConfirmDelete(false), setDeleted(true))
            else setDeleteError(say(e))
          } finally {
            setBusy(false)
          }
        }}
      >
        <p>{whatIsLost(ep)}</p>
      </ConfirmDialog>
    </Page>
  )
}
