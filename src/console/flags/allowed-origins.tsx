// The project's allowed origins (PATCH /api/v1/projects/{id} with allowed_origins): the CORS
// allow-list of browser evaluation, so it sits under the web provider's snippet, the code it
// governs. Any origin ("*", the default), a list of origins, or an empty list (browser access
// off). Each origin is checked and normalised as the API does (settings-checks.ts) when added; the
// list is sent on Save, and a refusal (the API's limit of 100 origins, say) shows under the field.
import { useState } from 'preact/hooks'
import { api } from '../ui/api.ts'
import { FormError, TextField } from '../ui/fields.tsx'
import { toast } from '../ui/toasts.tsx'
import { base, project } from './project-data.ts'
import { ORIGIN_HINT, originOf } from './settings-checks.ts'
import type { Project } from './types.ts'

interface Draft {
  any: boolean
  list: string[]
}

const fromSaved = (saved: string[]): Draft => (saved.includes('*') ? { any: true, list: [] } : { any: false, list: saved })
const bodyOf = (d: Draft) => (d.any ? ['*'] : d.list)

export function AllowedOrigins({ id }: { id: string }) {
  const saved = project.value?.allowed_origins
  /** null: not edited, the saved list is shown (and follows changes made elsewhere). */
  const [draft, setDraft] = useState<Draft | null>(null)
  const [origin, setOrigin] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  if (!saved) return null
  const d = draft ?? fromSaved(saved)
  const dirty = JSON.stringify(bodyOf(d)) !== JSON.stringify(saved)
  const edit = (next: Draft) => {
    setDraft(next)
    setError(null)
  }

  const save = async () => {
    setBusy(true)
    setError(null)
    try {
      const r = await api<Project>('PATCH', base(id), { body: { allowed_origins: bodyOf(d) } })
      project.value = r.data
      setDraft(null)
      toast('Allowed origins saved')
    } catch (err) {
      setError((err as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <section class="card" aria-labelledby="origins-title">
      <h3 id="origins-title">Allowed origins (web pages)</h3>
      <p>
        Browsers let only pages of these origins evaluate this project's flags with a client SDK key, as the web provider above does; servers and apps are not limited by it.
      </p>
      <fieldset>
        <legend>Which web pages may evaluate flags</legend>
        <div class="check">
          <input type="radio" id="origins-any" name="origins-mode" checked={d.any} onChange={() => edit({ ...d, any: true })} />
          <label for="origins-any">Any origin (*)</label>
        </div>
        <div class="check">
          <input type="radio" id="origins-listed" name="origins-mode" checked={!d.any} onChange={() => edit({ ...d, any: false })} />
          <label for="origins-listed">Only the origins listed</label>
        </div>
      </fieldset>
      {!d.any && (
        <>
          {d.list.length ? (
            <ul class="origin-list" aria-label="Allowed origins">
              {d.list.map((o) => (
                <li key={o} class="row">
                  <code>{o}</code>
                  <button
                    type="button"
                    class="small"
                    aria-label={`Remove ${o}`}
                    onClick={() => {
                      edit({ ...d, list: d.list.filter((x) => x !== o) })
                      // The button is gone: focus stays in the editor rather than falling to the page.
                      document.getElementById('origin-new')?.focus()
                    }}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          ) : (
            <p class="notice notice-warn">No origin listed: no web page can evaluate this project's flags (browser access is off).</p>
          )}
          <form
            aria-label="Add an allowed origin"
            onSubmit={(e) => {
              e.preventDefault()
              const o = originOf(origin)
              if (!o) return setError(`Must be ${ORIGIN_HINT}`)
              if (d.list.includes(o)) return setError(`${o} is already in the list`)
              edit({ any: false, list: [...d.list, o] })
              setOrigin('')
            }}
          >
            <div class="inline-fields">
              <TextField
                id="origin-new"
                class="grow"
                label="Origin"
                type="text"
                autoComplete="off"
                spellcheck={false}
                placeholder="https://app.example.com"
                hint="scheme://host[:port], as the browser's address bar shows it without the path"
                value={origin}
                error={error}
                onValue={setOrigin}
              />
              <button type="submit">Add origin</button>
            </div>
          </form>
        </>
      )}
      {d.any && <FormError error={error} />}
      <div class="row">
        <button type="button" class="primary" disabled={busy} onClick={save}>
          Save allowed origins
        </button>
        {dirty && <span class="muted">Not saved yet</span>}
      </div>
    </section>
  )
}
