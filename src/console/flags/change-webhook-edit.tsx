// Editing a change webhook (PATCH …/webhooks/{webhook}): URL, environment, events, description and
// whether it is enabled, with the create form's checks before sending. Only what changed is sent.
// What only the service can judge (a private address where those are refused, an environment
// deleted meanwhile) comes back as the API's own message under the field it names.
import { useState } from 'preact/hooks'
import { api, ApiError, seg } from '../ui/api.ts'
import { Dialog } from '../ui/dialog.tsx'
import { Checkbox, FormError, SelectField, TextField } from '../ui/fields.tsx'
import { environments } from './project-data.ts'
import { WEBHOOK_EVENTS, webhookUrlProblem } from './settings-checks.ts'
import type { Webhook } from './types.ts'

interface Form {
  url: string
  environment: string
  events: string[]
  description: string
  enabled: boolean
}

const formOf = (w: Webhook): Form => ({ url: w.url, environment: w.environment, events: w.events ?? WEBHOOK_EVENTS, description: w.description, enabled: w.enabled })
const sameEvents = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x))

/** The PATCH body: the fields that differ from `w` (a webhook of every event stays so while all are ticked). */
export function webhookChange(w: Webhook, f: Form): Record<string, unknown> {
  const body: Record<string, unknown> = {}
  if (f.url !== w.url) body.url = f.url
  if (f.environment !== w.environment) body.environment = f.environment
  if (!sameEvents(f.events, w.events ?? WEBHOOK_EVENTS)) body.events = WEBHOOK_EVENTS.filter((e) => f.events.includes(e))
  if (f.description !== w.description) body.description = f.description
  if (f.enabled !== w.enabled) body.enabled = f.enabled
  return body
}

interface Props {
  url: string
  webhook: Webhook | null
  onClose: () => void
  onSaved: (w: Webhook) => void
}

export function EditWebhookDialog(props: Props) {
  // The form is drawn only while open, so each opening starts from the webhook as it is now.
  return (
    <Dialog open={!!props.webhook} title="Edit the webhook" onClose={props.onClose}>
      {props.webhook && <EditForm {...props} w={props.webhook} />}
    </Dialog>
  )
}

function EditForm(props: Props & { w: Webhook }) {
  const { w } = props
  const [f, setF] = useState<Form>(() => formOf(w))
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [formError, setFormError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const set = (part: Partial<Form>) => {
    setF({ ...f, ...part })
    // A field's message goes once it is edited: it spoke of what was there before.
    setErrors((errs) => Object.fromEntries(Object.entries(errs).filter(([k]) => !(k in part))))
  }
  // An environment renamed or deleted since keeps its name here until another is chosen.
  const envs = environments.value.map((e) => e.name)
  if (!envs.includes(f.environment)) envs.push(f.environment)

  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault()
        const errs: Record<string, string> = {}
        const problem = webhookUrlProblem(f.url)
        if (problem) errs.url = problem
        if (!f.events.length) errs.events = 'Choose at least one event'
        setErrors(errs)
        setFormError(null)
        if (Object.keys(errs).length) return
        const body = webhookChange(w, f)
        if (!Object.keys(body).length) return props.onClose()
        setBusy(true)
        try {
          const r = await api<Webhook>('PATCH', `${props.url}/${seg(w.id)}`, { body })
          props.onSaved(r.data)
        } catch (err) {
          const ae = err as ApiError
          const field = ae.field?.split(/[.[]/)[0]
          if (field && field in f) setErrors({ [field]: ae.message })
          else setFormError(ae.message)
        } finally {
          setBusy(false)
        }
      }}
    >
      <TextField id="edit-hook-url" label="URL" type="url" required maxLength={2048} value={f.url} error={errors.url} onValue={(url) => set({ url })} />
      <SelectField id="edit-hook-env" label="Environment" value={f.environment} error={errors.environment} options={envs.map((e) => ({ value: e, label: e }))} onValue={(environment) => set({ environment })} />
      <fieldset aria-describedby={errors.events ? 'edit-hook-events-error' : undefined}>
        <legend>Events</legend>
        {WEBHOOK_EVENTS.map((ev) => (
          <Checkbox key={ev} id={`edit-hook-ev-${ev}`} label={ev} checked={f.events.includes(ev)} onValue={(on) => set({ events: on ? [...f.events, ev] : f.events.filter((x) => x !== ev) })} />
        ))}
        {errors.events && (
          <p class="field-error" id="edit-hook-events-error">
            {errors.events}
          </p>
        )}
      </fieldset>
      <TextField id="edit-hook-description" label="Description" maxLength={200} value={f.description} error={errors.description} onValue={(description) => set({ description })} />
      <Checkbox id="edit-hook-enabled" label="Enabled" hint="Unticked, the webhook is paused: changes made meanwhile are not sent, then or later." checked={f.enabled} onValue={(enabled) => set({ enabled })} />
      <FormError error={formError} />
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          Save webhook
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  )
}
