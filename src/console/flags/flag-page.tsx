// One flag: on/off per environment, its default and targeting (rules, segments, rollouts,
// weighted variants) in the environment being edited, name and tags, delete. Every change is sent
// with If-Match: the version it was made on. A 412 (someone changed the flag meanwhile) shows the
// conflict and lets the user reload, or re-apply the same change on the current version. Follows
// the change stream: reloads when it has no unsaved edits, says so when it has, and says when the
// flag was deleted elsewhere.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, seg } from '../ui/api.ts'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { Checkbox, FormError, SelectField, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { navigate } from '../ui/router.ts'
import { toast } from '../ui/toasts.tsx'
import { fromDraft, toDraft, type Draft, type Problems } from './draft.ts'
import { ConflictPanel } from './conflict.tsx'
import { FlagTabs } from './flag-tabs.tsx'
import { base, environments, lastChange, resynced, segments } from './project-data.ts'
import { RulesEditor, SplitEditor } from './rule-editor.tsx'
import type { Flag } from './types.ts'
import { ValueInput } from './value-input.tsx'

interface Conflict {
  message: string
  current: number | null
  what: string
  retry: (version: number | null) => Promise<void>
}

export function FlagPage({ id, flagKey }: { id: string; flagKey: string }) {
  const envs = environments.value.map((e) => e.name)
  const [byEnv, setByEnv] = useState<Record<string, Flag> | null>(null)
  const [version, setVersion] = useState<number | null>(null)
  const [deleted, setDeleted] = useState(false)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [editEnv, setEditEnv] = useState('production')
  const [draft, setDraft] = useState<Draft | null>(null)
  const [name, setName] = useState('')
  const [tags, setTags] = useState('')
  const [dirty, setDirtyState] = useState(false)
  // Read by loads that finish later than they started: an edit made meanwhile is never overwritten.
  const dirtyRef = useRef(false)
  const setDirty = (d: boolean) => {
    dirtyRef.current = d
    setDirtyState(d)
  }
  const [problems, setProblems] = useState<Problems>({})
  const [formError, setFormError] = useState<string | null>(null)
  const [conflict, setConflict] = useState<Conflict | null>(null)
  const [changedElsewhere, setChangedElsewhere] = useState(false)
  const [confirmDelete, setConfirmDelete] = useState(false)
  const [busy, setBusy] = useState(false)
  /** A toggle sent and not answered yet: the checkbox shows it at once. */
  /** Bumped when a save found problems: focus then moves to the first field in error, once drawn. */
  const [focusTick, setFocusTick] = useState(0)
  useLayoutEffect(() => {
    if (focusTick) (document.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus()
  }, [focusTick])
  const [toggling, setToggling] = useState<Record<string, boolean>>({})
  const flagUrl = (env: string) => `${base(id)}/flags/${seg(flagKey)}?environment=${encodeURIComponent(env)}`

  /** The version the form's draft was read from. */
  const draftVersion = useRef<number | null>(null)
  /** Reads the flag in every environment; `drop` discards unsaved edits (the user asked to reload). */
  const load = async (drop = false) => {
    if (drop) dirtyRef.current = false
    const names = envs.length ? envs : ['production']
    try {
      const answers = await Promise.all(names.map((env) => api<Flag>('GET', flagUrl(env))))
      const next: Record<string, Flag> = {}
      names.forEach((env, i) => (next[env] = answers[i]!.data))
      const v = Math.max(...answers.map((a) => a.version ?? -1))
      setByEnv(next)
      setVersion(v >= 0 ? v : null)
      setDeleted(false)
      setLoadError(null)
      // Edited while this load was on its way: keep the edits, and say so if the flag moved under them.
      if (dirtyRef.current) {
        if (v !== draftVersion.current) setChangedElsewhere(true)
      } else {
        setChangedElsewhere(false)
        draftVersion.current = v >= 0 ? v : null
        resetDraft(next, editEnv)
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && /flag/i.test(e.message)) setDeleted(true)
      else setLoadError((e as Error).message)
    }
  }
  const resetDraft = (all: Record<string, Flag>, env: string) => {
    const f = all[env] ?? all.production!
    setDraft(toDraft(f))
    setName(f.name)
    setTags((f.tags ?? []).join(', '))
    setDirty(false)
    setProblems({})
    setFormError(null)
  }

  useEffect(() => {
    if (envs.length) void load()
  }, [id, flagKey, envs.join(','), resynced.value])

  useEffect(() => {
    const c = lastChange.value
    if (!c || c.kind !== 'flag' || c.key !== flagKey) return
    if (c.deleted) return setDeleted(true)
    if (c.version !== undefined && version !== null && c.version <= version) return // our own change
    if (dirty) setChangedElsewhere(true)
    else void load()
  }, [lastChange.value])

  const edit = (d: Draft) => {
    setDraft(d)
    setDirty(true)
  }

  /** Runs a change made on `v`; a 412 turns into the conflict panel, with the change kept to re-apply. */
  const change = async (what: string, run: (v: number | null) => Promise<void>, v = version) => {
    setBusy(true)
    setFormError(null)
    try {
      await run(v)
      setConflict(null)
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) {
        const current = typeof e.body?.current?.version === 'number' ? e.body.current.version : null
        setConflict({ message: e.message, current, what, retry: run })
      } else if (e instanceof ApiError && e.status === 404 && /flag/i.test(e.message)) setDeleted(true)
      else if (e instanceof ApiError && e.status === 400 && e.field) {
        setProblems({ [e.field]: e.message })
        setFormError(`The service refused the change: ${e.message}`)
        setFocusTick((n) => n + 1)
      } else setFormError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  const toggle = async (env: string, on: boolean) => {
    setToggling((t) => ({ ...t, [env]: on }))
    await change(`turn ${flagKey} ${on ? 'on' : 'off'} in ${env}`, async (v) => {
      const r = await api<Flag>('PUT', flagUrl(env), { body: { enabled: on }, ifMatch: v })
      setByEnv((prev) => ({ ...prev!, [env]: r.data }))
      if (r.version !== null) setVersion(r.version)
      // The draft holds no on/off: it stays valid on the version this toggle made.
      if (draftVersion.current === v) draftVersion.current = r.version
      toast(`${flagKey} is ${on ? 'on' : 'off'} in ${env}`)
    })
    setToggling((t) => {
      const { [env]: _, ...rest } = t
      return rest
    })
  }

  const save = () => {
    if (!draft || !byEnv) return
    const { body, problems: found } = fromDraft(draft, byEnv.production?.type)
    const cur = byEnv[editEnv]!
    if (!name.trim()) found['name'] = 'Give the flag a name'
    setProblems(found)
    if (Object.keys(found).length) {
      setFormError(`${Object.keys(found).length} field${Object.keys(found).length === 1 ? ' needs' : 's need'} fixing before saving.`)
      setFocusTick((n) => n + 1)
      return
    }
    const full: Record<string, unknown> = { ...body, name: name.trim() }
    if (!cur.fallthrough && body.fallthrough === null) delete full.fallthrough
    const tagList = tags.split(',').map((s) => s.trim()).filter(Boolean)
    if (tagList.join(',') !== (cur.tags ?? []).join(',')) full.tags = tagList
    return change(`save the targeting of ${flagKey} in ${editEnv}`, async (v) => {
      const r = await api<Flag>('PUT', flagUrl(editEnv), { body: full, ifMatch: v })
      setByEnv((prev) => ({ ...prev!, [editEnv]: r.data }))
      if (r.version !== null) setVersion(r.version)
      draftVersion.current = r.version
      setDraft(toDraft(r.data))
      setDirty(false)
      setChangedElsewhere(false)
      setProblems({})
      toast(`Saved ${flagKey} in ${editEnv}`)
    })
  }

  if (deleted)
    return (
      <Page title={flagKey}>
        <FlagTabs id={id} flagKey={flagKey} />
        <div class="deleted" role="alert">
          <h2>This flag was deleted</h2>
          <p>
            <strong>{flagKey}</strong> no longer exists: it was deleted (in another tab, by someone else or through the API). Its history is still kept.
          </p>
          <a href={`/projects/${id}`}>Back to the flags</a>
        </div>
      </Page>
    )
  if (!byEnv || !draft)
    return (
      <Page title={flagKey}>
        <FlagTabs id={id} flagKey={flagKey} />
        {loadError ? <Notice kind="error">{loadError}</Notice> : <p>Loading…</p>}
      </Page>
    )

  const f = byEnv[editEnv] ?? byEnv.production!
  return (
    <Page title={flagKey}>
      <FlagTabs id={id} flagKey={flagKey} />
      <p class="muted">
        {f.type ? `${f.type} flag` : 'Untyped flag (string values)'} · changed <Time iso={f.updated_at} />
        {version !== null && ` · version ${version}`}
      </p>
      {conflict && (
        <ConflictPanel
          thing="this flag"
          heading="h2"
          message={conflict.message}
          change={conflict.what}
          busy={busy}
          onReload={async () => {
            await load(true)
            setConflict(null)
          }}
          onReapply={() => change(conflict.what, conflict.retry, conflict.current)}
        />
      )}
      {changedElsewhere && !conflict && (
        <Notice kind="warn">
          This flag was just changed elsewhere. Saving your edits will ask what to do; or{' '}
          <button type="button" class="link" onClick={() => load(true)}>
            reload it now
          </button>{' '}
          (drops your edits).
        </Notice>
      )}

      <fieldset>
        <legend>On or off, per environment</legend>
        <div class="env-toggles">
          {Object.keys(byEnv).map((env) => (
            <Checkbox key={env} id={`enabled-${env}`} label={`On in ${env}`} checked={toggling[env] ?? byEnv[env]!.enabled} disabled={busy} onValue={(on) => toggle(env, on)} />
          ))}
        </div>
      </fieldset>

      <form
        onSubmit={(e) => {
          e.preventDefault()
          void save()
        }}
        aria-labelledby="targeting-title"
      >
        <h2 id="targeting-title">Targeting</h2>
        <div class="inline-fields">
          <SelectField
            id="edit-env"
            label="Environment to edit"
            value={editEnv}
            options={Object.keys(byEnv).map((e) => ({ value: e, label: e }))}
            onValue={(env) => {
              if (dirty && !confirm('Drop your unsaved edits of this environment?')) return
              setEditEnv(env)
              resetDraft(byEnv, env)
            }}
          />
          <TextField id="flag-name" class="grow" label="Name" required maxLength={200} value={name} error={problems.name} onValue={(v) => (setName(v), setDirty(true))} />
          <TextField id="flag-tags" class="grow" label="Tags" value={tags} hint="Comma-separated" error={problems.tags} onValue={(v) => (setTags(v), setDirty(true))} />
        </div>
        <ValueInput id="default-value" label={`Default value in ${editEnv}`} type={f.type} value={draft.default_value} error={problems.default_value} onValue={(v) => edit({ ...draft, default_value: v })} />
        <h3>Rules, tried in order; the first that matches serves</h3>
        <RulesEditor rules={draft.rules} type={f.type} segments={segments.value.map((s) => s.name)} problems={problems} onChange={(rules) => edit({ ...draft, rules })} />
        <h3>When no rule matches</h3>
        <Checkbox
          id="use-fallthrough"
          label="Serve weighted variants instead of the default value"
          checked={!!draft.fallthrough}
          onValue={(on) => edit({ ...draft, fallthrough: on ? { variants: [{ name: 'control', weight: '50', value: draft.default_value }, { name: 'treatment', weight: '50', value: draft.default_value }], stickiness: '' } : null })}
        />
        {draft.fallthrough && <SplitEditor at="fallthrough" split={draft.fallthrough} type={f.type} problems={problems} onChange={(s) => edit({ ...draft, fallthrough: s })} />}
        <FormError error={formError} />
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy}>
            Save {editEnv}
          </button>
          <button type="button" disabled={!dirty} onClick={() => resetDraft(byEnv, editEnv)}>
            Discard edits
          </button>
          <button type="button" class="danger" onClick={() => setConfirmDelete(true)}>
            Delete flag
          </button>
        </div>
      </form>
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete ${flagKey}?`}
        confirmLabel="Delete flag"
        danger
        busy={busy}
        onClose={() => setConfirmDelete(false)}
        onConfirm={() =>
          change(`delete ${flagKey}`, async (v) => {
            await api('DELETE', `${base(id)}/flags/${seg(flagKey)}`, { ifMatch: v })
            setConfirmDelete(false)
            toast(`${flagKey} deleted`)
            navigate(`/projects/${id}`)
          })
        }
      >
        <p>
          Deletes <strong>{flagKey}</strong> from every environment ({Object.keys(byEnv).join(', ')}): applications asking for it get their code default (FLAG_NOT_FOUND). Its history is kept.
        </p>
      </ConfirmDialog>
    </Page>
  )
}
