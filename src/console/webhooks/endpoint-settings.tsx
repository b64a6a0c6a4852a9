// "Edit settings" of one endpoint: name, the response answered to senders and the forward target,
// changed in place (PATCH …/endpoints/{token}) so the capture URL senders know stays the same.
// The fields carry the checks the API makes (those of the create form and more); a refusal is
// shown at the field the API names. Only changed fields are sent; an empty target stops forwarding.
// The settings can change elsewhere while the dialog is open (the page follows the live stream):
// without edits the fields follow; with edits they are kept and the dialog says "changed
// elsewhere", and saving then sends only the fields edited here, so what the other change set in
// the fields left alone is not put back.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, seg } from '../ui/api.ts'
import { Dialog } from '../ui/dialog.tsx'
import { FormError, TextArea, TextField } from '../ui/fields.tsx'
import { Notice } from '../ui/page.tsx'
import { toast } from '../ui/toasts.tsx'
import { label } from './endpoint-actions.ts'
import { say } from './say.ts'
import type { Endpoint } from './types.ts'

type Field = 'name' | 'response_code' | 'response_body' | 'response_content_type' | 'forward_url'
const FIELDS: Field[] = ['name', 'response_code', 'response_body', 'response_content_type', 'forward_url']
const MAX_BODY = 65_536

interface Values {
  name: string
  response_code: string
  response_body: string
  response_content_type: string
  forward_url: string
}

const valuesOf = (ep: Endpoint): Values => ({
  name: ep.name ?? '',
  response_code: String(ep.response_code),
  response_body: ep.response_body,
  response_content_type: ep.response_content_type,
  forward_url: ep.forward_url ?? '',
})

/** What the API would refuse, said before asking it (it checks again). */
function check(v: Values): { field: Field; message: string } | null {
  const code = Number(v.response_code)
  if (!/^\d+$/.test(v.response_code.trim()) || code < 200 || code > 599) return { field: 'response_code', message: 'response_code must be an integer from 200 to 599' }
  if (v.response_body.length > MAX_BODY) return { field: 'response_body', message: `response_body must be at most ${MAX_BODY} characters` }
  if (!v.response_content_type.trim()) return { field: 'response_content_type', message: 'response_content_type must not be empty' }
  if (!/^[\t\x20-\x7e]*$/.test(v.response_content_type)) return { field: 'response_content_type', message: 'response_content_type must be printable ASCII (it is sent as a header)' }
  const url = v.forward_url.trim()
  if (url && !(/^https?:\/\//i.test(url) && URL.canParse(url))) return { field: 'forward_url', message: 'forward_url must be an absolute http(s) URL' }
  return null
}

const same = (a: Values, b: Values) => FIELDS.every((f) => a[f] === b[f])

/** The fields edited since `from` (what the dialog opened with), as the API takes them. */
function changes(from: Values, v: Values): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const name = v.name.trim()
  if (name !== from.name) out.name = name || null
  if (Number(v.response_code) !== Number(from.response_code)) out.response_code = Number(v.response_code)
  if (v.response_body !== from.response_body) out.response_body = v.response_body
  if (v.response_content_type.trim() !== from.response_content_type) out.response_content_type = v.response_content_type.trim()
  const url = v.forward_url.trim()
  if (url !== from.forward_url) out.forward_url = url || null
  return out
}

export function EndpointSettings(props: { ep: Endpoint; paid: boolean; onSaved: (ep: Endpoint) => void }) {
  const { ep } = props
  const [open, setOpen] = useState(false)
  const [v, setV] = useState<Values>(valuesOf(ep))
  /** The settings the fields started from: edits are what differs from these. */
  const [base, setBase] = useState<Values>(valuesOf(ep))
  const [elsewhere, setElsewhere] = useState(false)
  const [error, setError] = useState<{ field: Field | null; message: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const set = (f: Field) => (value: string) => setV((old) => ({ ...old, [f]: value }))
  const at = (f: Field) => (error?.field === f ? error.message : null)
  const reset = () => {
    setV(valuesOf(ep))
    setBase(valuesOf(ep))
    setElsewhere(false)
  }
  const show = () => {
    reset()
    setError(null)
    setOpen(true)
  }
  // New settings while open (another tab, a colleague, the API; or this dialog's own save).
  useEffect(() => {
    if (!open) return
    const now = valuesOf(ep)
    if (same(now, base)) return
    if (same(v, base)) reset() // no edits: the fields follow
    else if (same(v, now)) (setBase(now), setElsewhere(false)) // the change is what was typed here
    else setElsewhere(true)
  }, [ep, open])

  const save = async (e: Event) => {
    e.preventDefault()
    const bad = check(v)
    if (bad) return setError(bad)
    const body = changes(base, v)
    if (!Object.keys(body).length) return setOpen(false)
    setBusy(true)
    setError(null)
    try {
      const r = await api<Endpoint>('PATCH', `/api/v1/endpoints/${seg(ep.endpoint_id)}`, { body })
      const stopped = ep.forward_url && !r.data.forward_url
      toast(`Settings of ${label(r.data)} saved${stopped ? '; forwards still owed were dead-lettered' : ''}`)
      setOpen(false)
      props.onSaved(r.data)
    } catch (err) {
      const named = err instanceof ApiError ? err.field : null
      const field = FIELDS.find((f) => f === named) ?? (/forward_url/.test(say(err)) ? 'forward_url' : null)
      setError({ field, message: say(err) })
    } finally {
      setBusy(false)
    }
  }

  return (
    <>
      <button type="button" onClick={show}>
        Edit settings
      </button>
      <Dialog open={open} title={`Settings of ${label(ep)}`} onClose={() => setOpen(false)}>
        <form onSubmit={save} aria-describedby="settings-note">
          <p id="settings-note" class="hint">
            The capture URL stays the same. Changes apply to the next capture and the next forward attempt.
          </p>
          <TextField id="set-name" label="Name" maxLength={200} value={v.name} onValue={set('name')} error={at('name')} hint="Optional: what sends to it." />
          <TextField
            id="set-forward"
            label="Forward to (URL)"
            type="url"
            maxLength={2048}
            placeholder="https://example.com/webhooks"
            value={v.forward_url}
            onValue={set('forward_url')}
            error={at('forward_url')}
            hint={
              props.paid
                ? 'Attempts still owed go to the new target. Empty: stop forwarding; forwards still owed are dead-lettered (retry or recover them after setting a target again).'
                : 'Forwarding needs a paid plan (see Account). Empty: not forwarded.'
            }
          />
          <TextField id="set-code" label="Response status" type="number" required min="200" max="599" step="1" value={v.response_code} onValue={set('response_code')} error={at('response_code')} hint="What senders get back: 200 to 599." />
          <TextField
            id="set-type"
            label="Response content type"
            required
            maxLength={255}
            value={v.response_content_type}
            onValue={set('response_content_type')}
            error={at('response_content_type')}
          />
          <TextArea id="set-body" label="Response body" rows={4} value={v.response_body} onValue={set('response_body')} error={at('response_body')} hint={`Up to ${MAX_BODY.toLocaleString('en-US')} characters.`} />
          {elsewhere && (
            <Notice kind="warn">
              <p id="settings-elsewhere">
                These settings were changed elsewhere (another tab, someone else or the API) while you edited them. Saving sends only the fields you changed here;{' '}
                <button type="button" class="link" onClick={reset}>
                  show the new settings
                </button>{' '}
                (drops your edits).
              </p>
            </Notice>
          )}
          {error && !error.field && <FormError error={error.message} />}
          <div class="buttons">
            <button type="submit" class="primary" disabled={busy}>
              Save settings
            </button>
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      </Dialog>
    </>
  )
}
