// The project's allowed origins (PATCH /api/v1/projects/{id} with allowed_origins): the CORS
// allow-list of browser evaluation, so it sits under the web provider's snippet, the code it
// governs. Any origin ("*", the default), a list of origins, or an empty list (browser access
// off). Each origin is checked and normalised as the API does (settings-checks.ts) when added; the
// list is sent on Save, and a refusal (the API's limit of 100 origins, say) shows under the field.
// The list is replaced whole, so Save sends If-Match with the project's version the edit started
// from: a list someone else saved meanwhile gets the conflict panel (theirs shown; reload, or
// re-apply mine on theirs), never overwritten silently.
import { useState } from 'preact/hooks'
import { api, ApiError } from '../ui/api.ts'
import { FormError, TextField } from '../ui/fields.tsx'
import { Notice } from '../ui/page.tsx'
import { toast } from '../ui/toasts.tsx'
import { ConflictPanel } from './conflict.tsx'
import { base, project } from './project-data.ts'
import { ORIGIN_HINT, originOf } from './settings-checks.ts'
import type { Project } from './types.ts'

interface Draft {
  any: boolean
  list: string[]
  /** The project's version the edit started from: sent as If-Match. */
  base: number | null
}

interface Conflict {
  message: string
  /** The project as it is now (the 412's `current`). */
  current: Project | null
  body: string[]
}

const fromSaved = (saved: string[], base: number | null): Draft => (saved.includes('*') ? { any: true, list: [], base } : { any: false, list: saved, base })
const describe = (origins: string[]) => (origins.includes('*') ? 'any origin (*)' : origins.length ? origins.join(', ') : 'none (browser access off)')
const bodyOf = (d: Draft) => (d.any ? ['*'] : d.list)

export function AllowedOrigins({ id }: { id: string }) {
  const saved = project.value?.allowed_origins
  /** null: not edited, the saved list is shown (and follows changes made elsewhere). */
  const [draft, setDraft] = useState<Draft | null>(null)
  const [origin, setOrigin] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [conflict, setConflict] = useState<Conflict | null>(null)
  if (!saved) return null
  const version = project.value?.version ?? null
  const d = draft ?? fromSaved(saved, version)
  const dirty = JSON.stringify(bodyOf(d)) !== JSON.stringify(saved)
  const changedElsewhere = draft !== null && draft.base !== null && version !== null && version !== draft.base
  const edit = (next: Draft) => {
    setDraft(next)
    setError(null)
  }

  /** Sends `list` on version `v`: a 412 becomes the conflict panel, with the list kept to re-apply. */
  const send = async (list: string[], v: number | null) => {
    setBusy(true)
    setError(null)
    try {
      const r = await api<Project>('PATCH', base(id), { body: { allowed_origins: list }, ifMatch: v })
      project.value = r.data
      setDraft(null)
      setConflict(null)
      toast('Allowed origins saved')
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        const cur = err.body?.current as Project | undefined
        setConflict({ message: err.message, current: cur && typeof cur.version === 'number' ? cur : null, body: list })
      } else setError((err as Error).message)
    } finally {
      setBusy(false)
    }
  }
  const save = () => send(bodyOf(d), d.base)
  const reload = () => {
    if (conflict?.current) project.value = conflict.current
    setDraft(null)
    setConflict(null)
    setError(null)
  }

  return (
    <section class="card" aria-labelledby="origins-title">
      <h3 id="origins-title">Allowed origins (web pages)</h3>
      <p>
        Browsers let only pages of these origins evaluate this project's flags with a client SDK key, as the web provider above does; servers and apps are not limited by it.
      </p>
      {conflict && (
        <ConflictPanel thing="this project's settings" message={conflict.message} busy={busy} onReload={reload} onReapply={() => send(conflict.body, conflict.current?.version ?? null)}>
          {conflict.current && <p>Their allowed origins: {describe(conflict.current.allowed_origins ?? ['*'])}</p>}
          <p>Yours: {describe(conflict.body)}</p>
        </ConflictPanel>
      )}
      {changedElsewhere && !conflict && (
        <Notice kind="warn">
          This project's settings were just changed elsewhere (now: {describe(saved)}). Saving your list will ask what to do; or{' '}
          <button type="button" class="link" onClick={reload}>
            drop your edits
          </button>
          .
        </Notice>
      )}
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
              edit({ ...d, any: false, list: [...d.list, o] })
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
