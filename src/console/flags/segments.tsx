// Segments: named condition sets shared by the project's rules. List, create and edit with the
// same condition editor as rules (segment-form.tsx; editing in segment-edit.tsx), delete (the
// API names the flags that still use one). The list follows the change stream (project-data.ts).
import { useState } from 'preact/hooks'
import { api, seg } from '../ui/api.ts'
import { FormError, TextField } from '../ui/fields.tsx'
import { Page } from '../ui/page.tsx'
import { toast } from '../ui/toasts.tsx'
import { keyProblem, type DraftCondition, type Problems } from './draft.ts'
import { describeRule } from './playground.tsx'
import { base, reloadProject, segments } from './project-data.ts'
import { SegmentEdit } from './segment-edit.tsx'
import { checkSegment, SegmentFields } from './segment-form.tsx'

export function Segments({ id }: { id: string }) {
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [conditions, setConditions] = useState<DraftCondition[]>([{ attribute: 'email', operator: 'ends_with', text: '', case_insensitive: false, negate: false }])
  const [problems, setProblems] = useState<Problems>({})
  const [formError, setFormError] = useState<string | null>(null)
  const [editing, setEditing] = useState<string | null>(null)
  const editedGone = editing !== null && !segments.value.some((s) => s.name === editing)
  return (
    <Page title="Segments">
      {segments.value.length === 0 && !editing && <p class="muted">No segments yet.</p>}
      {segments.value.map((s) =>
        s.name === editing ? (
          <SegmentEdit key={`edit-${s.name}`} id={id} segment={s} onDone={() => setEditing(null)} />
        ) : (
          <section class="card" key={s.name} aria-label={`Segment ${s.name}`}>
            <h2 class="flag-key">{s.name}</h2>
            {s.description && <p class="muted">{s.description}</p>}
            <p>{describeRule({ conditions: s.conditions })}</p>
            <div class="buttons">
              <button type="button" class="small" aria-label={`Edit the segment ${s.name}`} onClick={() => setEditing(s.name)}>
                Edit
              </button>
              <button
                type="button"
                class="small"
                aria-label={`Delete the segment ${s.name}`}
                onClick={async () => {
                  try {
                    // On the version shown: one changed meanwhile is not deleted unseen (412, its message in the toast).
                    await api('DELETE', `${base(id)}/segments/${seg(s.name)}`, { ifMatch: s.version ?? null })
                    toast(`Segment ${s.name} deleted`)
                    await reloadProject(id)
                  } catch (e) {
                    toast((e as Error).message, 'error')
                  }
                }}
              >
                Delete
              </button>
            </div>
          </section>
        ),
      )}
      {/* Deleted elsewhere while open: the form says so (it heard the change) until closed. */}
      {editedGone && (
        <div class="deleted card" role="alert">
          <h2>Segment {editing} was deleted</h2>
          <p>It was deleted elsewhere (in another tab, by someone else or through the API) while you edited it; your edits were not saved.</p>
          <button type="button" onClick={() => setEditing(null)}>
            Close
          </button>
        </div>
      )}
      <form
        class="card"
        aria-labelledby="new-segment"
        onSubmit={async (e) => {
          e.preventDefault()
          const checked = checkSegment(conditions, description)
          const mine = checked.problems
          const nameError = keyProblem(name)
          if (nameError) mine.name = nameError
          setProblems(mine)
          setFormError(null)
          if (Object.keys(mine).length) return
          try {
            await api('POST', `${base(id)}/segments`, { body: { name, conditions: checked.conditions, ...(description ? { description } : {}) } })
            toast(`Segment ${name} created`)
            setName('')
            setDescription('')
            await reloadProject(id)
          } catch (err) {
            const ae = err as { field?: string | null; message: string }
            if (ae.field) setProblems({ [ae.field]: ae.message })
            setFormError(ae.message)
          }
        }}
      >
        <h2 id="new-segment">New segment</h2>
        <TextField id="segment-name" label="Name" required value={name} error={problems.name} onValue={setName} />
        <SegmentFields idPrefix="" description={description} conditions={conditions} problems={problems} onDescription={setDescription} onConditions={setConditions} addLabel="Add condition" />
        <div class="buttons">
          <button type="submit" class="primary">
            Create segment
          </button>
        </div>
        <FormError error={formError} />
      </form>
    </Page>
  )
}
