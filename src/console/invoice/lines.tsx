// The invoice's lines: add, remove and move up or down (buttons, so the keyboard does all of it;
// focus follows the moved line), each with its amount computed as the service computes it.
import { useLayoutEffect } from 'preact/hooks'
import { fieldId } from '../ui/fields.tsx'
import { draft, emptyLine, type LineDraft } from './draft.ts'
import { CATEGORY_OPTIONS, In, Pick } from './bound.tsx'
import { problemAt, problemUnder } from './errors.ts'
import { Adjustments } from './adjustments.tsx'

function update(items: LineDraft[]): void {
  draft.value = { ...draft.value, items }
}

// The element to focus once the lines have rendered after a change: set by an action, taken by
// the layout effect of the render that shows the change (a frame timer alone could run before
// that render on a busy machine, and the button that had the focus is gone by then).
let pendingFocus: string | null = null
function focusSoon(id: string): void {
  pendingFocus = id
}

export function Lines(props: { amounts: (string | null)[]; maxLines: number }) {
  const items = draft.value.items
  useLayoutEffect(() => {
    const el = pendingFocus ? document.getElementById(pendingFocus) : null
    if (el) {
      pendingFocus = null
      el.focus()
    }
  })
  const move = (i: number, by: number) => {
    const next = [...items]
    const [l] = next.splice(i, 1)
    next.splice(i + by, 0, l!)
    update(next)
    // At the list's end the button is gone: focus its other one.
    const target = i + by
    focusSoon(target === 0 ? `down-${l!.key}` : target === next.length - 1 ? `up-${l!.key}` : `${by < 0 ? 'up' : 'down'}-${l!.key}`)
  }
  const remove = (i: number) => {
    const next = items.filter((_, j) => j !== i)
    update(next)
    focusSoon(next[Math.min(i, next.length - 1)] ? fieldId(`items[${Math.min(i, next.length - 1)}].description`) : 'add-line')
  }
  const listError = problemAt('items')
  return (
    <fieldset class="lines">
      <legend>Lines</legend>
      {listError && (
        <p class="field-error" id={fieldId('items')}>
          {listError}
        </p>
      )}
      <ol class="line-list">
        {items.map((l, i) => (
          <li key={l.key} class="line">
            <div class="line-head">
              <span class="line-no">Line {i + 1}</span>
              <span class="line-amount" aria-label={`Amount of line ${i + 1}`}>
                {props.amounts[i] ?? '—'}
              </span>
            </div>
            <div class="inline-fields">
              <In path={`items[${i}].description`} label="Description" class="grow wide" />
              <In path={`items[${i}].quantity`} label="Quantity" inputMode="decimal" class="num-field" />
              <In path={`items[${i}].unit_price`} label="Unit price" inputMode="decimal" class="num-field" />
            </div>
            <details class="more" open={problemUnder(`items[${i}].allowances`) || problemUnder(`items[${i}].charges`) || undefined}>
              <summary>
                Unit, VAT, allowances and charges of line {i + 1}
                {l.allowances.length + l.charges.length > 0 ? ` (${l.allowances.length + l.charges.length})` : ''}
              </summary>
              <div class="inline-fields">
                <In path={`items[${i}].unit`} label="Unit code" hint="C62 one, HUR hour, DAY" class="num-field" />
                <In path={`items[${i}].tax_rate`} label="VAT %" inputMode="decimal" hint="Else the invoice's" class="num-field" />
                <Pick path={`items[${i}].tax_category`} label="VAT category" options={CATEGORY_OPTIONS} />
              </div>
              <Adjustments path={`items[${i}].allowances`} title={`Allowances of line ${i + 1} (BG-27)`} />
              <Adjustments path={`items[${i}].charges`} title={`Charges of line ${i + 1} (BG-28)`} />
            </details>
            <div class="buttons line-buttons">
              {i > 0 && (
                <button type="button" class="small" id={`up-${l.key}`} aria-label={`Move line ${i + 1} up`} onClick={() => move(i, -1)}>
                  ↑ Up
                </button>
              )}
              {i < items.length - 1 && (
                <button type="button" class="small" id={`down-${l.key}`} aria-label={`Move line ${i + 1} down`} onClick={() => move(i, 1)}>
                  ↓ Down
                </button>
              )}
              {items.length > 1 && (
                <button type="button" class="small" aria-label={`Remove line ${i + 1}`} onClick={() => remove(i)}>
                  Remove
                </button>
              )}
            </div>
          </li>
        ))}
      </ol>
      <button
        type="button"
        id="add-line"
        disabled={items.length >= props.maxLines}
        onClick={() => {
          update([...items, emptyLine()])
          focusSoon(fieldId(`items[${items.length}].description`))
        }}
      >
        Add line
      </button>
      {items.length >= props.maxLines && <p class="hint">The demo makes invoices of up to {props.maxLines} lines; sign up for up to 1,000.</p>}
    </fieldset>
  )
}
