// One flag value typed by the flag's type: a true/false choice for booleans, a number field,
// a JSON text area for objects, text otherwise. The form holds the text; draft.ts parses it.
import { SelectField, TextArea, TextField } from '../ui/fields.tsx'
import type { FlagType } from './types.ts'

export function ValueInput(p: { id: string; label: string; type: FlagType | undefined; value: string; error?: string | null; onValue: (v: string) => void }) {
  if (p.type === 'boolean')
    return <SelectField id={p.id} label={p.label} value={p.value} error={p.error} onValue={p.onValue} options={[{ value: 'true', label: 'true' }, { value: 'false', label: 'false' }]} />
  if (p.type === 'number') return <TextField id={p.id} label={p.label} type="number" step="any" required value={p.value} error={p.error} onValue={p.onValue} />
  if (p.type === 'object') return <TextArea id={p.id} label={p.label} rows={3} value={p.value} error={p.error} hint="JSON object or array" onValue={p.onValue} />
  return <TextField id={p.id} label={p.label} value={p.value} error={p.error} maxLength={1024} onValue={p.onValue} hint={p.type === undefined ? 'Text; "true"/"false" read as booleans over OpenFeature' : undefined} />
}
