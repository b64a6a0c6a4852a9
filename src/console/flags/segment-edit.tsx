// Editing one segment: its description and conditions, with the condition editor and checks of
// creating one (segment-form.tsx). The change is sent with If-Match: the version the form was
// read from. A 412 (someone changed the segment meanwhile) shows the conflict with their version
// and lets the user reload it, or re-apply the same change on it: never applied over theirs
// silently. Follows the change stream as the flag page does: takes a newer version when the
// form holds no edits, says so when it does, and says when the segment was deleted elsewhere.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError, seg } from '../ui/api.ts'
import { FormError } from '../ui/fields.tsx'
import { ConflictPanel } from './conflict.tsx'
import { Notice } from '../ui/page.tsx'
import { toast } from '../ui/toasts.tsx'
import { conditionDraft, type DraftCondition, type Problems } from './draft.ts'
import { describeRule } from './playground.tsx'
import { base, lastChange, reloadProject } from './project-data.ts'
import { checkSegment, SegmentFields } from './segment-form.tsx'
import type { Condition, Segment } from './types.ts'

interface Conflict {
  message: string
  /** The segment as it is now (the 412's `current`). */
  current: Segment | null
  body: Record<string, unknown>
}

export function SegmentEdit({ id, segment, onDone }: { id: string; segment: Segment; onDone: () => void }) {
  const name = segment.name
  const url = `${base(id)}/segments/${seg(name)}`
  const prefix = `edit-${name.replace(/[^A-Za-z0-9_-]/g, '_')}-`
  const [shown, setShown] = useState<Segment>(segment)
  const [description, setDescription] = useState(segment.description ?? '')
  const [conditions, setConditions] = useState<DraftCondition[]>(segment.conditions.map(conditionDraft))
  const [dirty, setDirty] = useState(false)
  const [problems, setProblems] = useState<Problems>({})
  const [formError, setFormError] = useState<string | null>(null)
  const [conflict, setConflict] = useState<Conflict | null>(null)
  const [changedElsewhere, setChangedElsewhere] = useState(false)
  const [deleted, setDeleted] = useState(false)
  const [busy, setBusy] = useState(false)
  /** The version the form was read from: sent as If-Match. */
  const version = useRef<number | null>(segment.version ?? null)
  const [focusTick, setFocusTick] = useState(0)
  useLayoutEffect(() => {
    if (focusTick) (document.querySelector(`form[data-segment="${CSS.escape(name)}"] [aria-invalid="true"]`) as HTMLElement | null)?.focus()
  }, [focusTick])

  const take = (s: Segment) => {
    setShown(s)
    version.current = s.version ?? null
    setDescription(s.description ?? '')
    setConditions(s.conditions.map(conditionDraft))
    setDirty(false)
    setProblems({})
    setFormError(null)
    setChangedElsewhere(false)
  }
  const reload = async () => {
    try {
      const r = await api<Segment>('GET', url)
      take({ ...r.data, version: r.version ?? r.data.version })
      setConflict(null)
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) setDeleted(true)
      else setFormError((e as Error).message)
    }
  }

  useEffect(() => {
    const c = lastChange.value
    if (!c || c.kind !== 'segment' || c.key !== name) return
    if (c.deleted) return setDeleted(true)
    if (c.version !== undefined && c.version !== null && version.current !== null && c.version <= version.current) return // ours, or older
    if (dirty) setChangedElsewhere(true)
    else void reload()
  }, [lastChange.value])

  /** Sends `body` on version `v`: a 412 becomes the conflict panel, with the body kept to re-apply. */
  const send = async (body: Record<string, unknown>, v: number | null) => {
    setBusy(true)
    setFormError(null)
    try {
      const r = await api<Segment>('PUT', url, { body, ifMatch: v })
      version.current = r.version ?? r.data.version ?? null
      toast(`Segment ${name} saved`)
      setConflict(null)
      await reloadProject(id)
      onDone()
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) {
        const cur = e.body?.current as Segment | undefined
        setConflict({ message: e.message, current: cur && typeof cur.version === 'number' ? cur : null, body })
      } else if (e instanceof ApiError && e.status === 404) setDeleted(true)
      else if (e instanceof ApiError && e.status === 400 && e.field) {
        setProblems({ [e.field]: e.message })
        setFormError(`The service refused the change: ${e.message}`)
        setFocusTick((n) => n + 1)
      } else setFormError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }

  const save = () => {
    const checked = checkSegment(conditions, description)
    setProblems(checked.problems)
    const n = Object.keys(checked.problems).length
    if (n) {
      setFormError(`${n} field${n === 1 ? ' needs' : 's need'} fixing before saving.`)
      setFocusTick((t) => t + 1)
      return
    }
    const body: Record<string, unknown> = { conditions: checked.conditions }
    if (description !== (shown.description ?? '')) body.description = description
    return send(body, version.current)
  }

  if (deleted)
    return (
      <div class="deleted card" role="alert">
        <h2>Segment {name} was deleted</h2>
        <p>It was deleted elsewhere (in another tab, by someone else or through the API) while you edited it; your edits were not saved.</p>
        <button type="button" onClick={onDone}>
          Close
        </button>
      </div>
    )

  const edit = <T,>(set: (v: T) => void) => (v: T) => (set(v), setDirty(true))
  return (
    <form
      class="card"
      data-segment={name}
      aria-labelledby={`${prefix}title`}
      onSubmit={(e) => {
        e.preventDefault()
        void save()
      }}
    >
      <h2 id={`${prefix}title`} class="flag-key">
        Edit segment {name}
      </h2>
      <p class="muted">{shown.version !== undefined && `Version ${shown.version}`}</p>
      {conflict && (
        <ConflictPanel
          thing="this segment"
          message={conflict.message}
          busy={busy}
          onReload={() => (conflict.current ? (take(conflict.current), setConflict(null)) : reload())}
          onReapply={() => send(conflict.body, conflict.current?.version ?? null)}
        >
          {conflict.current && <p>Their version: {describeRule({ conditions: conflict.current.conditions as Condition[] })}</p>}
        </ConflictPanel>
      )}
      {changedElsewhere && !conflict && (
        <Notice kind="warn">
          This segment was just changed elsewhere. Saving your edits will ask what to do; or{' '}
          <button type="button" class="link" onClick={() => reload()}>
            reload it now
          </button>{' '}
          (drops your edits).
        </Notice>
      )}
      <SegmentFields
        idPrefix={prefix}
        description={description}
        conditions={conditions}
        problems={problems}
        onDescription={edit(setDescription)}
        onConditions={edit(setConditions)}
        addLabel={`Add condition to ${name}`}
      />
      <FormError error={formError} />
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          Save segment {name}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  )
}
