// Inputs bound to one field of the draft by its API path (`items[2].quantity`): value, change and
// the service's message for that path in its error slot. The path also makes the input's id, so a
// message in the summary links to its field.
import type { ComponentChildren } from 'preact'
import { fieldId, SelectField, TextArea, TextField, type Option } from '../ui/fields.tsx'
import { draft, getField, setField } from './draft.ts'
import { problemAt } from './errors.ts'

interface Bound {
  path: string
  label: ComponentChildren
  hint?: ComponentChildren
  class?: string
}

export function In(p: Bound & { type?: string; inputMode?: string; placeholder?: string; autoComplete?: string; maxLength?: number }) {
  const { path, ...rest } = p
  return <TextField {...rest} id={fieldId(path)} value={getField(draft.value, path)} error={problemAt(path)} spellcheck={false} onValue={(v) => setField(path, v)} />
}

export function Area(p: Bound & { rows?: number }) {
  return <TextArea id={fieldId(p.path)} label={p.label} hint={p.hint} class={p.class} rows={p.rows ?? 3} value={getField(draft.value, p.path)} error={problemAt(p.path)} onValue={(v) => setField(p.path, v)} />
}

export function Pick(p: Bound & { options: Option[] }) {
  return <SelectField id={fieldId(p.path)} label={p.label} hint={p.hint} class={p.class} options={p.options} value={getField(draft.value, p.path)} error={problemAt(p.path)} onValue={(v) => setField(p.path, v)} />
}

export const CATEGORY_OPTIONS: Option[] = [
  { value: '', label: '(from the rate)' },
  { value: 'S', label: 'S: standard rate' },
  { value: 'Z', label: 'Z: zero rated' },
  { value: 'E', label: 'E: exempt' },
  { value: 'AE', label: 'AE: reverse charge' },
  { value: 'K', label: 'K: intra-EU supply' },
  { value: 'G', label: 'G: export outside the EU' },
  { value: 'O', label: 'O: outside the scope of VAT' },
]
