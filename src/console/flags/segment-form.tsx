// What creating and editing a segment share: its conditions edited with the rules' condition
// editor, and the checks made before sending (the rules' own, on the paths the segment API names
// in its messages: `conditions[0].value`), so ours and the API's land on the same field.
import { TextField } from '../ui/fields.tsx'
import { fromDraft, type DraftCondition, type Problems } from './draft.ts'
import { ConditionEditor } from './rule-editor.tsx'
import type { Condition } from './types.ts'

/** As the API's schema (flag-schema.ts): at most this many conditions in a rule or a segment. */
const MAX_CONDITIONS = 20

export const newCondition = (): DraftCondition => ({ attribute: '', operator: 'eq', text: '', case_insensitive: false, negate: false })

/** The conditions as the API wants them, and what is wrong with them or the description (empty: it can be sent). */
export function checkSegment(conditions: DraftCondition[], description: string): { conditions: Condition[]; problems: Problems } {
  // The rule checks of draft.ts, on a rule made of these conditions; paths renamed back.
  const { body, problems: found } = fromDraft({ default_value: '', rules: [{ conditions, segments: [], mode: 'value', value: '', split: { variants: [], stickiness: '' } }], fallthrough: null }, undefined)
  const problems: Problems = {}
  for (const [k, v] of Object.entries(found)) if (k.startsWith('rules[0].conditions')) problems[k.replace('rules[0].', '')] = v
  if (conditions.length === 0) problems.conditions = 'Add at least one condition'
  else if (conditions.length > MAX_CONDITIONS) problems.conditions = `At most ${MAX_CONDITIONS} conditions`
  if (description.length > 500) problems.description = 'At most 500 characters'
  return { conditions: body.rules[0]!.conditions, problems }
}

/** The description field and the list of conditions with "Add condition"; `idPrefix` keeps the ids of two forms apart. */
export function SegmentFields(p: { idPrefix: string; description: string; conditions: DraftCondition[]; problems: Problems; onDescription: (v: string) => void; onConditions: (c: DraftCondition[]) => void; addLabel: string }) {
  const { conditions } = p
  return (
    <>
      <TextField id={`${p.idPrefix}description`} class="grow" label="Description" maxLength={500} value={p.description} error={p.problems.description} onValue={p.onDescription} />
      {conditions.map((c, j) => (
        <ConditionEditor
          key={j}
          n={j + 1}
          at={`conditions[${j}]`}
          idPrefix={p.idPrefix}
          c={c}
          problems={p.problems}
          onChange={(nc) => p.onConditions(conditions.map((x, k) => (k === j ? nc : x)))}
          onRemove={() => p.onConditions(conditions.filter((_, k) => k !== j))}
        />
      ))}
      {p.problems.conditions && (
        <p class="field-error" id={`${p.idPrefix}conditions-error`}>
          {p.problems.conditions}
        </p>
      )}
      <div class="row">
        <button type="button" class="small" disabled={conditions.length >= MAX_CONDITIONS} onClick={() => p.onConditions([...conditions, newCondition()])}>
          {p.addLabel}
        </button>
      </div>
    </>
  )
}
