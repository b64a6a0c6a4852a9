// Allowances and charges: the invoice's (EN 16931 BG-20 / BG-21: shipping, packaging, rebates, each
// with its amount, reason or reason code, and its own VAT category and rate) and a line's (BG-27 /
// BG-28: amount and reason; the line's VAT applies).
import { fieldId } from '../ui/fields.tsx'
import { draft, emptyAdjustment, getList, setList } from './draft.ts'
import { CATEGORY_OPTIONS, In, Pick } from './bound.tsx'

/** `path`: `allowances`, `charges`, or a line's `items[2].allowances`. */
export function Adjustments(props: { path: string; title: string }) {
  const rows = getList(draft.value, props.path)
  const line = props.path.startsWith('items[')
  const one = props.path.endsWith('allowances') ? 'allowance' : 'charge'
  const where = line ? ` of line ${Number(/\d+/.exec(props.path)![0]) + 1}` : ''
  return (
    <div class="adjustments">
      {line ? <h4>{props.title}</h4> : <h3>{props.title}</h3>}
      {rows.length === 0 && <p class="hint">None.</p>}
      {rows.map((r, i) => (
        <div key={r.key} class="inline-fields adjustment" role="group" aria-label={`${one} ${i + 1}${where}`}>
          <In path={`${props.path}[${i}].amount`} label="Amount" inputMode="decimal" class="num-field" />
          <In path={`${props.path}[${i}].reason`} label="Reason" class="grow" />
          <In path={`${props.path}[${i}].reason_code`} label="Reason code" hint={one === 'allowance' ? '95 discount' : 'FC freight'} class="num-field" />
          {!line && <Pick path={`${props.path}[${i}].tax_category`} label="VAT category" options={CATEGORY_OPTIONS} />}
          {!line && <In path={`${props.path}[${i}].tax_rate`} label="VAT %" inputMode="decimal" class="num-field" />}
          <button type="button" class="small" aria-label={`Remove ${one} ${i + 1}${where}`} onClick={() => setList(props.path, rows.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button
        type="button"
        class="small"
        aria-label={`Add ${one}${where}`}
        onClick={() => {
          setList(props.path, [...rows, emptyAdjustment()])
          requestAnimationFrame(() => document.getElementById(fieldId(`${props.path}[${rows.length}].amount`))?.focus())
        }}
      >
        Add {one}
      </button>
    </div>
  )
}
