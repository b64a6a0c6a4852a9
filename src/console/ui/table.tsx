// Tables that may be wider than a phone scroll inside their own focusable region (so keyboard
// users can scroll them too) instead of making the whole page scroll sideways.
import type { ComponentChildren } from 'preact'

export function TableWrap(props: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={props.label}>
      {props.children}
    </div>
  )
}
