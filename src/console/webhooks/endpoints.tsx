// The endpoints at a glance: each capture URL with its copy button, captures today, the last
// capture, the forward target's health and whether forwarding is paused; creating one, pausing,
// resuming and deleting (after a confirmation naming what is lost). Refreshed every 15 s.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, reconnects, seg } from '../ui/api.ts'
import { CopyButton } from '../ui/copy.tsx'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { FormError, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { TableWrap } from '../ui/table.tsx'
import { toast } from '../ui/toasts.tsx'
import { APP } from './app-name.ts'
import { deleteEndpoint, label, setPaused, whatIsLost } from './endpoint-actions.ts'
import { ForwardState, Health } from './health.tsx'
import { say } from './say.ts'
import { account } from './session.ts'
import { utc } from './time.tsx'
import type { Endpoint } from './types.ts'

const REFRESH_MS = 15_000

export function Endpoints() {
  const [list, setList] = useState<Endpoint[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [forwardUrl, setForwardUrl] = useState('')
  const [createError, setCreateError] = useState<{ field: string | null; message: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const [toDelete, setToDelete] = useState<Endpoint | null>(null)
  const [deleteError, setDeleteError] = useState<string | null>(null)

  const load = () =>
    api<{ endpoints: Endpoint[] }>('GET', '/api/v1/endpoints')
      .then((r) => {
        setList(r.data.endpoints)
        setError(null)
      })
      .catch((e) => setError(say(e)))
  useEffect(() => {
    void load()
    const t = setInterval(() => document.visibilityState === 'visible' && void load(), REFRESH_MS)
    return () => clearInterval(t)
  }, [reconnects.value])

  const paid = account.value?.plan !== 'free'
  const create = async (e: Event) => {
    e.preventDefault()
    setBusy(true)
    setCreateError(null)
    try {
      const body: Record<string, string> = {}
      if (name.trim()) body.name = name.trim()
      if (forwardUrl.trim()) body.forward_url = forwardUrl.trim()
      const r = await api<Endpoint>('POST', '/api/v1/endpoints', { body })
      toast(`Endpoint ${label(r.data)} created`)
      setName('')
      setForwardUrl('')
      await load()
    } catch (err) {
      const field = err instanceof ApiError ? err.field : null
      setCreateError({ field: field ?? (/forward_url/.test(say(err)) ? 'forward_url' : null), message: say(err) })
    } finally {
      setBusy(false)
    }
  }

  const pause = async (ep: Endpoint, paused: boolean) => {
    try {
      await setPaused(ep, paused)
      toast(`Forwarding of ${label(ep)} ${paused ? 'paused' : 'resumed'}`)
      await load()
    } catch (err) {
      toast(say(err), 'error')
    }
  }

  return (
    <Page title="Endpoints" appName={APP} actions={<button type="button" onClick={() => void load()}>Refresh</button>}>
      {error && <Notice kind="error">{error}</Notice>}
      {!list && !error && <p>Loading…</p>}
      {list && list.length === 0 && <Notice>No endpoint yet: create one below, then point a sender (Stripe, GitHub, Shopify…) at its capture URL.</Notice>}
      {list && list.length > 0 && (
        <TableWrap label="Endpoints">
          <table class="endpoints cards-narrow">
            <caption>
              {list.length} endpoint{list.length === 1 ? '' : 's'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Capture URL</th>
                <th scope="col" class="num">
                  Today
                </th>
                <th scope="col">Last capture</th>
                <th scope="col">Forwarding</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.map((ep) => (
                <tr key={ep.endpoint_id}>
                  <th scope="row">
                    <a href={`/endpoints/${seg(ep.endpoint_id)}`}>{label(ep)}</a>
                  </th>
                  <td data-label="Capture URL">
                    <code class="capture-url">{ep.url}</code> <CopyButton text={ep.url} what={`capture URL of ${label(ep)}`} />
                  </td>
                  <td class="num" data-label="Captured today">
                    {ep.captures_today}
                  </td>
                  <td data-label="Last capture">
                    <Time iso={utc(ep.last_request_at)} />
                  </td>
                  <td data-label="Forwarding">
                    <ForwardState ep={ep} /> <Health ep={ep} />
                  </td>
                  <td data-label="Actions">
                    <div class="row">
                      {ep.forward_url && paid && (
                        <button type="button" class="small" onClick={() => pause(ep, !ep.forward_paused)} aria-label={`${ep.forward_paused ? 'Resume' : 'Pause'} forwarding of ${label(ep)}`}>
                          {ep.forward_paused ? 'Resume' : 'Pause'}
                        </button>
                      )}
                      <button type="button" class="small" onClick={() => (setDeleteError(null), setToDelete(ep))} aria-label={`Delete ${label(ep)}`}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <form class="card" aria-labelledby="create-title" onSubmit={create}>
        <h2 id="create-title">New endpoint</h2>
        <div class="inline-fields">
          <TextField id="ep-name" class="grow" label="Name" maxLength={200} value={name} onValue={setName} error={createError?.field === 'name' ? createError.message : null} hint="Optional: what sends to it." />
          <TextField
            id="ep-forward"
            class="grow"
            label="Forward to (URL)"
            type="url"
            placeholder="https://example.com/webhooks"
            value={forwardUrl}
            onValue={setForwardUrl}
            error={createError?.field === 'forward_url' ? createError.message : null}
            hint={paid ? 'Optional: each capture is also sent there, retried until it succeeds or is dead-lettered. Set once: the API has no change of target.' : 'Forwarding needs a paid plan (see Account).'}
          />
        </div>
        {createError && createError.field !== 'name' && createError.field !== 'forward_url' && <FormError error={createError.message} />}
        <button type="submit" class="primary" disabled={busy}>
          Create endpoint
        </button>
      </form>
      <ConfirmDialog
        open={!!toDelete}
        title={toDelete ? `Delete ${label(toDelete)}?` : 'Delete'}
        confirmLabel="Delete endpoint for good"
        danger
        busy={busy}
        error={deleteError}
        onClose={() => setToDelete(null)}
        onConfirm={async () => {
          const ep = toDelete!
          setBusy(true)
          try {
            const n = await deleteEndpoint(ep)
            toast(`${label(ep)} deleted with ${n} captured request${n === 1 ? '' : 's'}`)
            setToDelete(null)
            await load()
          } catch (err) {
            setDeleteError(say(err))
          } finally {
            setBusy(false)
          }
        }}
      >
        {toDelete && <p>{whatIsLost(toDelete)}</p>}
      </ConfirmDialog>
    </Page>
  )
}
