// The invoice's allowances and charges (EN 16931 BG-20 / BG-21): shipping, packaging, rebates,
// each with its amount, reason or reason code, and its own VAT category and rate.
import { fieldId } from '../ui/fields.tsx'
import { draft, emptyAdjustment } from './draft.ts'
import { CATEGORY_OPTIONS, In, Pick } from './bound.tsx'

export function Adjustments(props: { kind: 'allowances' | 'charges' }) {
  const rows = draft.value[props.kind]
  const one = props.kind === 'allowances' ? 'allowance' : 'charge'
  const set = (next: typeof rows) => (draft.value = { ...draft.value, [props.kind]: next })
  return (
    <div class="adjustments">
      <h3>{props.kind === 'allowances' ? 'Allowances (BG-20)' : 'Charges (BG-21)'}</h3>
      {rows.length === 0 && <p class="hint">None.</p>}
      {rows.map((r, i) => (
        <div key={r.key} class="inline-fields adjustment" role="group" aria-label={`${one} ${i + 1}`}>
          <In path={`${props.kind}[${i}].amount`} label="Amount" inputMode="decimal" class="num-field" />
          <In path={`${props.kind}[${i}].reason`} label="Reason" class="grow" />
          <In path={`${props.kind}[${i}].reason_code`} label="Reason code" hint={one === 'allowance' ? '95 discount' : 'FC freight'} class="num-field" />
          <Pick path={`${props.kind}[${i}].tax_category`} label="VAT category" options={CATEGORY_OPTIONS} />
          <In path={`${props.kind}[${i}].tax_rate`} label="VAT %" inputMode="decimal" class="num-field" />
          <button type="button" class="small" aria-label={`Remove ${one} ${i + 1}`} onClick={() => set(rows.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        class="small"
        onClick={() => {
          set([...rows, emptyAdjustment()])
          requestAnimationFrame(() => document.getElementById(fieldId(`${props.kind}[${rows.length}].amount`))?.focus())
        }}
      >
        Add {one}
      </button>
    </div>
  )
}
