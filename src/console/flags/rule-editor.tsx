// Editing targeting: conditions (every engine operator, with the value field its operator needs),
// segments, a served value or a weighted split with its stickiness attribute, rules reordered and
// removed with buttons. Each field shows the problem found for its path (ours or the API's).
import { Checkbox, fieldId, SelectField, TextArea, TextField } from '../ui/fields.tsx'
import { emptyVariant, newRule, type DraftCondition, type DraftRule, type DraftSplit, type Problems } from './draft.ts'
import { OPERATOR_INFO, operatorInfo, VALUE_HINTS } from './operators.ts'
import type { FlagType } from './types.ts'
import { ValueInput } from './value-input.tsx'

const OPERATOR_OPTIONS = OPERATOR_INFO.map((i) => ({ value: i.op, label: `${i.label} (${i.op})`, group: i.group }))

/** `idPrefix` keeps two forms on one screen (a segment's edit and the new segment) apart: same paths, other ids. */
export function ConditionEditor(p: { at: string; c: DraftCondition; problems: Problems; onChange: (c: DraftCondition) => void; onRemove: () => void; n: number; idPrefix?: string }) {
  const { c, at } = p
  const info = operatorInfo(c.operator)
  const set = (patch: Partial<DraftCondition>) => p.onChange({ ...c, ...patch })
  const multi = info.kind === 'list' || info.kind === 'text-or-list' || info.kind === 'cidr'
  const id = fieldId((p.idPrefix ?? '') + at)
  return (
    <fieldset class="condition">
      <legend>Condition {p.n}</legend>
      <div class="inline-fields">
        <TextField id={`${id}-attribute`} label="Context attribute" value={c.attribute} required maxLength={128} list="common-attributes" error={p.problems[`${at}.attribute`]} onValue={(v) => set({ attribute: v })} />
        <SelectField id={`${id}-operator`} label="Operator" value={c.operator} options={OPERATOR_OPTIONS} error={p.problems[`${at}.operator`]} onValue={(v) => set({ operator: v })} />
        {multi ? (
          <TextArea id={`${id}-value`} class="grow" label="Values" rows={2} value={c.text} hint={VALUE_HINTS[info.kind]} error={p.problems[`${at}.value`]} onValue={(v) => set({ text: v })} />
        ) : (
          <TextField
            id={`${id}-value`}
            class="grow"
            label={info.kind === 'percent' ? 'Percent' : 'Value'}
            value={c.text}
            type={info.kind === 'number' || info.kind === 'percent' ? 'number' : 'text'}
            step={info.kind === 'percent' ? '0.01' : info.kind === 'number' ? 'any' : undefined}
            min={info.kind === 'percent' ? '0' : undefined}
            max={info.kind === 'percent' ? '100' : undefined}
            placeholder={info.kind === 'datetime' ? '2026-01-31T12:00:00Z' : info.kind === 'semver' ? '2.1.0' : undefined}
            hint={VALUE_HINTS[info.kind]}
            error={p.problems[`${at}.value`]}
            onValue={(v) => set({ text: v })}
          />
        )}
      </div>
      <div class="row">
        {info.folds && <Checkbox id={`${id}-ci`} label="Ignore case" checked={c.case_insensitive} onValue={(v) => set({ case_insensitive: v })} />}
        <Checkbox id={`${id}-negate`} label="Negate (match when this does not hold)" checked={c.negate} onValue={(v) => set({ negate: v })} />
        <button type="button" class="small" onClick={p.onRemove}>
          Remove condition {p.n}
        </button>
      </div>
    </fieldset>
  )
}

export function SplitEditor(p: { at: string; split: DraftSplit; type: FlagType | undefined; problems: Problems; onChange: (s: DraftSplit) => void }) {
  const { split, at } = p
  const id = fieldId(at)
  const setVariant = (i: number, patch: Partial<DraftSplit['variants'][number]>) =>
    p.onChange({ ...split, variants: split.variants.map((v, j) => (j === i ? { ...v, ...patch } : v)) })
  const sum = split.variants.reduce((a, v) => a + (Number(v.weight) || 0), 0)
  return (
    <fieldset>
      <legend>Weighted variants</legend>
      {split.variants.map((v, i) => (
        <div class="variant-row" key={i}>
          <TextField id={`${id}-v${i}-name`} label={`Variant ${i + 1} name`} value={v.name} required maxLength={64} error={p.problems[`${at}.variants[${i}].name`]} onValue={(x) => setVariant(i, { name: x })} />
          <TextField id={`${id}-v${i}-weight`} label="Weight %" type="number" min="0" max="100" step="0.01" value={v.weight} error={p.problems[`${at}.variants[${i}].weight`]} onValue={(x) => setVariant(i, { weight: x })} />
          <ValueInput id={`${id}-v${i}-value`} label="Value" type={p.type} value={v.value} error={p.problems[`${at}.variants[${i}].value`]} onValue={(x) => setVariant(i, { value: x })} />
          <button type="button" class="small" onClick={() => p.onChange({ ...split, variants: split.variants.filter((_, j) => j !== i) })}>
            Remove variant {i + 1}
          </button>
        </div>
      ))}
      <p class={p.problems[`${at}.variants`] ? 'field-error' : 'hint'} id={`${id}-variants-error`}>
        {p.problems[`${at}.variants`] ?? `Weights add up to ${Math.round(sum * 100) / 100} (must be 100).`}
      </p>
      <div class="row">
        <button type="button" class="small" disabled={split.variants.length >= 20} onClick={() => p.onChange({ ...split, variants: [...split.variants, emptyVariant(p.type, split.variants.length + 1)] })}>
          Add variant
        </button>
      </div>
      <TextField
        id={`${id}-stickiness`}
        label="Stickiness attribute"
        value={split.stickiness}
        list="common-attributes"
        maxLength={128}
        placeholder="targetingKey"
        hint="The context attribute hashed to pick a variant; empty: targetingKey, else user_id."
        error={p.problems[`${at}.stickiness`]}
        onValue={(x) => p.onChange({ ...split, stickiness: x })}
      />
    </fieldset>
  )
}

export function RuleEditor(p: {
  i: number
  count: number
  rule: DraftRule
  type: FlagType | undefined
  segments: string[]
  problems: Problems
  onChange: (r: DraftRule) => void
  onMove: (to: number) => void
  onRemove: () => void
}) {
  const { rule, i } = p
  const at = `rules[${i}]`
  const id = fieldId(at)
  const set = (patch: Partial<DraftRule>) => p.onChange({ ...rule, ...patch })
  return (
    <section class="card" aria-labelledby={`${id}-title`}>
      <div class="rule-head">
        <h3 id={`${id}-title`}>Rule {i + 1}</h3>
        <div class="row">
          <button type="button" class="small" disabled={i === 0} onClick={() => p.onMove(i - 1)}>
            Move rule {i + 1} up
          </button>
          <button type="button" class="small" disabled={i === p.count - 1} onClick={() => p.onMove(i + 1)}>
            Move rule {i + 1} down
          </button>
          <button type="button" class="small" onClick={p.onRemove}>
            Remove rule {i + 1}
          </button>
        </div>
      </div>
      <p class="hint">All conditions must hold (AND). A rule without conditions matches everyone.</p>
      {rule.conditions.map((c, j) => (
        <ConditionEditor
          key={j}
          n={j + 1}
          at={`${at}.conditions[${j}]`}
          c={c}
          problems={p.problems}
          onChange={(nc) => set({ conditions: rule.conditions.map((x, k) => (k === j ? nc : x)) })}
          onRemove={() => set({ conditions: rule.conditions.filter((_, k) => k !== j) })}
        />
      ))}
      {p.problems[`${at}.conditions`] && <p class="field-error">{p.problems[`${at}.conditions`]}</p>}
      <button type="button" class="small" disabled={rule.conditions.length >= 20} onClick={() => set({ conditions: [...rule.conditions, { attribute: '', operator: 'eq', text: '', case_insensitive: false, negate: false }] })}>
        Add condition to rule {i + 1}
      </button>
      {p.segments.length > 0 && (
        <fieldset>
          <legend>Segments (their conditions must hold too)</legend>
          {p.segments.map((s) => (
            <Checkbox
              key={s}
              id={`${id}-seg-${s}`}
              label={s}
              checked={rule.segments.includes(s)}
              onValue={(on) => set({ segments: on ? [...rule.segments, s] : rule.segments.filter((x) => x !== s) })}
            />
          ))}
          {rule.segments.map((s, k) => p.problems[`${at}.segments[${k}]`] && <p class="field-error">{p.problems[`${at}.segments[${k}]`]}</p>)}
        </fieldset>
      )}
      <fieldset>
        <legend>Serve</legend>
        <div class="row">
          <div class="check">
            <input type="radio" id={`${id}-mode-value`} name={`${id}-mode`} checked={rule.mode === 'value'} onChange={() => set({ mode: 'value' })} />
            <label for={`${id}-mode-value`}>A value</label>
          </div>
          <div class="check">
            <input type="radio" id={`${id}-mode-variants`} name={`${id}-mode`} checked={rule.mode === 'variants'} onChange={() => set({ mode: 'variants' })} />
            <label for={`${id}-mode-variants`}>Weighted variants</label>
          </div>
        </div>
        {rule.mode === 'value' ? (
          <ValueInput id={`${id}-value`} label={`Value served by rule ${i + 1}`} type={p.type} value={rule.value} error={p.problems[`${at}.value`]} onValue={(v) => set({ value: v })} />
        ) : (
          <SplitEditor at={at} split={rule.split} type={p.type} problems={p.problems} onChange={(s) => set({ split: s })} />
        )}
      </fieldset>
    </section>
  )
}

export function RulesEditor(p: { rules: DraftRule[]; type: FlagType | undefined; segments: string[]; problems: Problems; onChange: (rules: DraftRule[]) => void }) {
  const { rules } = p
  return (
    <div>
      <datalist id="common-attributes">
        {['targetingKey', 'user_id', 'email', 'country', 'plan', 'app_version', 'ip', 'now'].map((a) => (
          <option key={a} value={a} />
        ))}
      </datalist>
      {rules.length === 0 && <p class="muted">No rules: everyone gets the default.</p>}
      {rules.map((r, i) => (
        <RuleEditor
          key={i}
          i={i}
          count={rules.length}
          rule={r}
          type={p.type}
          segments={p.segments}
          problems={p.problems}
          onChange={(nr) => p.onChange(rules.map((x, k) => (k === i ? nr : x)))}
          onRemove={() => p.onChange(rules.filter((_, k) => k !== i))}
          onMove={(to) => {
            const next = rules.slice()
            const [moved] = next.splice(i, 1)
            next.splice(to, 0, moved!)
            p.onChange(next)
          }}
        />
      ))}
      <button type="button" class="add-rule" disabled={rules.length >= 50} onClick={() => p.onChange([...rules, newRule(p.type)])}>
        Add rule
      </button>
    </div>
  )
}
