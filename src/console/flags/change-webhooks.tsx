// Flag-change webhooks: the list, a new webhook (its signing secret shown once), each webhook's
// deliveries with their attempts, a retry of a failed delivery, edit (change-webhook-edit.tsx),
// pause and resume, a new signing secret (rotate-secret.tsx), and delete.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, reconnects, seg } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { Checkbox, FormError, SelectField, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { TableWrap } from '../ui/table.tsx'
import { toast } from '../ui/toasts.tsx'
import { EditWebhookDialog } from './change-webhook-edit.tsx'
import { RotateSecretDialog } from './rotate-secret.tsx'
import { base, environments } from './project-data.ts'
import { WEBHOOK_EVENTS as EVENTS, webhookUrlProblem } from './settings-checks.ts'
import type { Delivery, Webhook } from './types.ts'

function Deliveries({ url }: { url: string }) {
  const [list, setList] = useState<Delivery[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const load = async () => {
    try {
      setList((await api<{ deliveries: Delivery[] }>('GET', `${url}/deliveries?limit=20`)).data.deliveries)
    } catch (e) {
      setError((e as Error).message)
    }
  }
  useEffect(() => void load(), [url])
  if (error) return <Notice kind="error">{error}</Notice>
  if (!list) return <p>Loading deliveries…</p>
  if (!list.length) return <p class="muted">No deliveries yet: they appear when a flag or segment changes.</p>
  return (
    <TableWrap label="Deliveries">
      <table>
        <caption>Last {list.length} deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">State</th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col" class="num">
              Last answer
            </th>
            <th scope="col">When</th>
            <th scope="col">Action</th>
          </tr>
        </thead>
        <tbody>
          {list.map((d) => (
            <tr key={d.id}>
              <td>{d.type}</td>
              <td>
                <span class={`pill ${d.state === 'delivered' ? 'on' : 'off'}`}>{d.state}</span>
              </td>
              <td class="num">{d.attempt_count}</td>
              <td class="num">{d.last_status ?? '—'}</td>
              <td>
                <Time iso={d.created_at} />
              </td>
              <td>
                {d.state !== 'pending' && (
                  <button
                    type="button"
                    class="small"
                    aria-label={`Retry the ${d.type} delivery`}
                    onClick={async () => {
                      try {
                        await api('POST', `${url}/deliveries/${seg(d.id)}/retry`)
                        toast('Sent again')
                        await load()
                      } catch (e) {
                        toast((e as Error).message, 'error')
                      }
                    }}
                  >
                    Retry
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  )
}

export function ChangeWebhooks({ id }: { id: string }) {
  const [list, setList] = useState<Webhook[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [url, setUrl] = useState('')
  const [env, setEnv] = useState('production')
  const [events, setEvents] = useState<string[]>(EVENTS)
  const [description, setDescription] = useState('')
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [formError, setFormError] = useState<string | null>(null)
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null)
  const [deleting, setDeleting] = useState<Webhook | null>(null)
  const [editing, setEditing] = useState<Webhook | null>(null)
  const [rotating, setRotating] = useState<Webhook | null>(null)
  const hooks = `${base(id)}/webhooks`
  const load = async () => {
    try {
      setList((await api<{ webhooks: Webhook[] }>('GET', hooks)).data.webhooks)
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    }
  }
  useEffect(() => void load(), [id, reconnects.value])

  return (
    <Page title="Change webhooks">
      <p>Each change of a flag or segment is POSTed, signed (Standard Webhooks), to these URLs.</p>
      {error && <Notice kind="error">{error}</Notice>}
      {secret && (
        <div class="keyshow" role="status">
          <p>
            <strong>Signing secret of {secret.url}, shown only once:</strong>
          </p>
          <CopyBlock text={secret.secret} what="signing secret" />
        </div>
      )}
      {list && list.length === 0 && <Notice>No webhooks yet.</Notice>}
      {list?.map((w) => (
        <section class="card" key={w.id} aria-label={`Webhook ${w.url}`}>
          <h2 class="flag-key">{w.url}</h2>
          <p class="muted">
            {w.environment} · {w.events ? w.events.join(', ') : 'all events'} · {w.enabled ? 'enabled' : 'paused: nothing is sent'} · secret <code>{w.secret_hint}</code>
            {w.description && ` · ${w.description}`}
          </p>
          <details>
            <summary>Deliveries</summary>
            <Deliveries url={`${hooks}/${seg(w.id)}`} />
          </details>
          <div class="row">
            <button type="button" class="small" aria-label={`Edit the webhook ${w.url}`} onClick={() => setEditing(w)}>
              Edit
            </button>
            <button
              type="button"
              class="small"
              aria-label={`${w.enabled ? 'Pause' : 'Resume'} the webhook ${w.url}`}
              onClick={async () => {
                try {
                  await api('PATCH', `${hooks}/${seg(w.id)}`, { body: { enabled: !w.enabled } })
                  toast(w.enabled ? `Paused ${w.url}: changes are not sent until it is resumed` : `Resumed ${w.url}`)
                  await load()
                } catch (e) {
                  toast((e as Error).message, 'error')
                }
              }}
            >
              {w.enabled ? 'Pause' : 'Resume'}
            </button>
            <button type="button" class="small" aria-label={`Rotate secret of the webhook ${w.url}`} onClick={() => setRotating(w)}>
              Rotate secret…
            </button>
            <button type="button" class="small" aria-label={`Delete the webhook ${w.url}`} onClick={() => setDeleting(w)}>
              Delete
            </button>
          </div>
        </section>
      ))}
      <form
        class="card"
        aria-labelledby="new-hook"
        onSubmit={async (e) => {
          e.preventDefault()
          const errs: Record<string, string> = {}
          const problem = webhookUrlProblem(url)
          if (problem) errs.url = problem
          if (!events.length) errs.events = 'Choose at least one event'
          setErrors(errs)
          setFormError(null)
          if (Object.keys(errs).length) return
          try {
            const r = await api<Webhook>('POST', hooks, { body: { url, environment: env, events, description } })
            setSecret({ url: r.data.url, secret: r.data.secret! })
            setUrl('')
            setDescription('')
            await load()
          } catch (err) {
            const ae = err as ApiError
            if (ae.field) setErrors({ [ae.field.split(/[.[]/)[0]!]: ae.message })
            else setFormError(ae.message)
          }
        }}
      >
        <h2 id="new-hook">New webhook</h2>
        <TextField id="hook-url" label="URL" type="url" required value={url} error={errors.url} placeholder="https://ci.example.com/flag-changes" onValue={setUrl} />
        <SelectField id="hook-env" label="Environment" value={env} error={errors.environment} options={environments.value.map((e) => ({ value: e.name, label: e.name }))} onValue={setEnv} />
        <fieldset aria-describedby={errors.events ? 'hook-events-error' : undefined}>
          <legend>Events</legend>
          {EVENTS.map((ev) => (
            <Checkbox key={ev} id={`hook-ev-${ev}`} label={ev} checked={events.includes(ev)} onValue={(on) => setEvents(on ? [...events, ev] : events.filter((x) => x !== ev))} />
          ))}
          {errors.events && (
            <p class="field-error" id="hook-events-error">
              {errors.events}
            </p>
          )}
        </fieldset>
        <TextField id="hook-description" label="Description" maxLength={200} value={description} error={errors.description} onValue={setDescription} />
        <FormError error={formError} />
        <button type="submit" class="primary">
          Create webhook
        </button>
      </form>
      <EditWebhookDialog
        url={hooks}
        webhook={editing}
        onClose={() => setEditing(null)}
        onSaved={async (w) => {
          toast(`Saved the webhook ${w.url}`)
          setEditing(null)
          await load()
        }}
      />
      <RotateSecretDialog url={hooks} webhook={rotating} onClose={() => setRotating(null)} onRotated={load} />
      <ConfirmDialog
        open={!!deleting}
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        danger
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          try {
            await api('DELETE', `${hooks}/${seg(deleting!.id)}`)
            setDeleting(null)
            await load()
          } catch (e) {
            toast((e as Error).message, 'error')
          }
        }}
      >
        <p>{deleting?.url} gets no more events, and its delivery log is deleted.</p>
      </ConfirmDialog>
    </Page>
  )
}
