// Segments: named condition sets shared by the project's rules. List, create with the same
// condition editor as rules, delete (the API names the flags that still use one).
import { useState } from 'preact/hooks'
import { api, seg } from '../ui/api.ts'
import { FormError, TextField } from '../ui/fields.tsx'
import { Page } from '../ui/page.tsx'
import { toast } from '../ui/toasts.tsx'
import { fromDraft, type DraftCondition, type Problems } from './draft.ts'
import { describeRule } from './playground.tsx'
import { base, reloadProject, segments } from './project-data.ts'
import { ConditionEditor } from './rule-editor.tsx'

export function Segments({ id }: { id: string }) {
  const [name, setName] = useState('')
  const [conditions, setConditions] = useState<DraftCondition[]>([{ attribute: 'email', operator: 'ends_with', text: '', case_insensitive: false, negate: false }])
  const [problems, setProblems] = useState<Problems>({})
  const [formError, setFormError] = useState<string | null>(null)
  return (
    <Page title="Segments">
      {segments.value.length === 0 && <p class="muted">No segments yet.</p>}
      {segments.value.map((s) => (
        <section class="card" key={s.name} aria-label={`Segment ${s.name}`}>
          <h2 class="flag-key">{s.name}</h2>
          <p>{describeRule({ conditions: s.conditions })}</p>
          <button
            type="button"
            class="small"
            aria-label={`Delete the segment ${s.name}`}
            onClick={async () => {
              try {
                await api('DELETE', `${base(id)}/segments/${seg(s.name)}`)
                toast(`Segment ${s.name} deleted`)
                await reloadProject(id)
              } catch (e) {
                toast((e as Error).message, 'error')
              }
            }}
          >
            Delete
          </button>
        </section>
      ))}
      <form
        class="card"
        aria-labelledby="new-segment"
        onSubmit={async (e) => {
          e.preventDefault()
          // The rule checks of draft.ts, on a rule made of these conditions; paths renamed back.
          const { body, problems: found } = fromDraft({ default_value: '', rules: [{ conditions, segments: [], mode: 'value', value: '', split: { variants: [], stickiness: '' } }], fallthrough: null }, undefined)
          const mine: Problems = {}
          for (const [k, v] of Object.entries(found)) if (k.startsWith('rules[0].conditions')) mine[k.replace('rules[0].', '')] = v
          if (!/^[A-Za-z0-9._-]{1,128}$/.test(name)) mine.name = '1–128 letters, digits, ".", "_" or "-"'
          setProblems(mine)
          setFormError(null)
          if (Object.keys(mine).length) return
          try {
            await api('POST', `${base(id)}/segments`, { body: { name, conditions: body.rules[0]!.conditions } })
            toast(`Segment ${name} created`)
            setName('')
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
        {conditions.map((c, j) => (
          <ConditionEditor
            key={j}
            n={j + 1}
            at={`conditions[${j}]`}
            c={c}
            problems={problems}
            onChange={(nc) => setConditions(conditions.map((x, k) => (k === j ? nc : x)))}
            onRemove={() => setConditions(conditions.filter((_, k) => k !== j))}
          />
        ))}
        <div class="buttons">
          <button type="button" onClick={() => setConditions([...conditions, { attribute: '', operator: 'eq', text: '', case_insensitive: false, negate: false }])}>
            Add condition
          </button>
          <button type="submit" class="primary">
            Create segment
          </button>
        </div>
        <FormError error={formError} />
      </form>
    </Page>
  )
}
