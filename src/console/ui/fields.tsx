// Labelled form fields with an error slot: the error (ours, or the API's own message when the
// server still refuses) sits right under the field, is tied to it with aria-describedby and marks
// it aria-invalid. Native inputs only, so browsers and assistive technology know them.
import type { ComponentChildren } from 'preact'

let uid = 0
/** A stable id for a field rendered inside a list (rules, conditions). */
export const fieldId = (path: string) => 'f-' + path.replace(/[^A-Za-z0-9_-]/g, '_')
export const newId = (prefix = 'id') => `${prefix}-${++uid}`

interface Common {
  id: string
  label: ComponentChildren
  error?: string | null
  hint?: ComponentChildren
  class?: string
}

function describedBy(p: Common): string | undefined {
  const ids = [p.hint ? `${p.id}-hint` : '', p.error ? `${p.id}-error` : ''].filter(Boolean)
  return ids.length ? ids.join(' ') : undefined
}

function Extras(p: Common) {
  return (
    <>
      {p.hint && (
        <p class="hint" id={`${p.id}-hint`}>
          {p.hint}
        </p>
      )}
      {p.error && (
        <p class="field-error" id={`${p.id}-error`}>
          {p.error}
        </p>
      )}
    </>
  )
}

/** The native input attributes the console's fields use. */
interface InputProps {
  type?: string
  required?: boolean
  maxLength?: number
  min?: string
  max?: string
  step?: string
  placeholder?: string
  autoComplete?: string
  spellcheck?: boolean
  list?: string
  pattern?: string
  disabled?: boolean
}
export function TextField(p: Common & InputProps & { value: string | number; onValue: (v: string) => void }) {
  const { id, label, error, hint, class: cls, value, onValue, ...rest } = p
  return (
    <div class={`field ${cls ?? ''}`}>
      <label for={id}>{label}</label>
      <input
        id={id}
        value={value}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy(p)}
        onInput={(e) => onValue((e.currentTarget as HTMLInputElement).value)}
        {...(rest as Record<string, unknown>)}
      />
      <Extras {...p} />
    </div>
  )
}

export function TextArea(p: Common & { value: string; onValue: (v: string) => void; rows?: number; required?: boolean; spellcheck?: boolean }) {
  return (
    <div class={`field ${p.class ?? ''}`}>
      <label for={p.id}>{p.label}</label>
      <textarea
        id={p.id}
        rows={p.rows ?? 4}
        value={p.value}
        required={p.required}
        spellcheck={p.spellcheck ?? false}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={describedBy(p)}
        onInput={(e) => p.onValue((e.currentTarget as HTMLTextAreaElement).value)}
      />
      <Extras {...p} />
    </div>
  )
}

export interface Option {
  value: string
  label: string
  group?: string
}

export function SelectField(p: Common & { value: string; options: Option[]; onValue: (v: string) => void; required?: boolean }) {
  const groups = new Map<string | undefined, Option[]>()
  for (const o of p.options) groups.set(o.group, [...(groups.get(o.group) ?? []), o])
  return (
    <div class={`field ${p.class ?? ''}`}>
      <label for={p.id}>{p.label}</label>
      <select
        id={p.id}
        value={p.value}
        required={p.required}
        aria-invalid={p.error ? 'true' : undefined}
        aria-describedby={describedBy(p)}
        onChange={(e) => p.onValue((e.currentTarget as HTMLSelectElement).value)}
      >
        {[...groups].map(([g, opts]) =>
          g ? (
            <optgroup key={g} label={g}>
              {opts.map((o) => (
                <option key={o.value} value={o.value} selected={o.value === p.value}>
                  {o.label}
                </option>
              ))}
            </optgroup>
          ) : (
            opts.map((o) => (
              <option key={o.value} value={o.value} selected={o.value === p.value}>
                {o.label}
              </option>
            ))
          ),
        )}
      </select>
      <Extras {...p} />
    </div>
  )
}

export function Checkbox(p: { id: string; label: ComponentChildren; checked: boolean; onValue: (v: boolean) => void; hint?: string; disabled?: boolean }) {
  return (
    <div class="check">
      <input
        type="checkbox"
        id={p.id}
        checked={p.checked}
        disabled={p.disabled}
        aria-describedby={p.hint ? `${p.id}-hint` : undefined}
        onChange={(e) => p.onValue((e.currentTarget as HTMLInputElement).checked)}
      />
      <label for={p.id}>{p.label}</label>
      {p.hint && (
        <span class="hint" id={`${p.id}-hint`}>
          {p.hint}
        </span>
      )}
    </div>
  )
}

/** An error of the whole form (not of one field): announced at once. */
export function FormError(p: { error?: string | null }) {
  return p.error ? (
    <p class="form-error" role="alert">
      {p.error}
    </p>
  ) : null
}
