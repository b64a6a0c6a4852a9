// Flag value types. A flag created without `type` is the seed's flag: its values are strings, and
// OFREP reads "true"/"false" as booleans. A typed flag (`boolean`, `string`, `number`, `object`)
// stores and serves JSON values of its type, and every value it can serve (default, rule values,
// variant values) is checked against the type before anything is stored.

export const FLAG_TYPES = ['boolean', 'string', 'number', 'object'] as const
export type FlagType = (typeof FLAG_TYPES)[number]

export const MAX_OBJECT_VALUE_BYTES = 8_192
export const MAX_STRING_VALUE_LENGTH = 1_024

/** Why `v` is not a value of `type` (the seed's untyped flag when undefined), or null. */
export function invalidTypedValue(type: FlagType | undefined, v: unknown): string | null {
  switch (type) {
    case undefined:
    case 'string':
      if (typeof v !== 'string') return `must be a string${type ? ' (the flag is of type string)' : ''}`
      return v.length > MAX_STRING_VALUE_LENGTH ? `must be at most ${MAX_STRING_VALUE_LENGTH} characters` : null
    case 'boolean':
      return typeof v === 'boolean' ? null : 'must be true or false (the flag is of type boolean)'
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number (the flag is of type number)'
    case 'object':
      if (v === null || typeof v !== 'object') return 'must be a JSON object or array (the flag is of type object)'
      return JSON.stringify(v).length > MAX_OBJECT_VALUE_BYTES ? `must be at most ${MAX_OBJECT_VALUE_BYTES} bytes of JSON` : null
  }
}

/** The default of `default_value` when a flag is created without one; undefined: required. */
export function implicitDefault(type: FlagType | undefined): unknown {
  return type === undefined ? 'true' : type === 'boolean' ? true : undefined
}

/** What a disabled flag serves: the seed's "false", false for a boolean flag, else its default. */
export function disabledValue(type: FlagType | undefined, defaultValue: unknown): unknown {
  return type === undefined ? 'false' : type === 'boolean' ? false : defaultValue
}

interface Servable {
  default_value?: unknown
  rules?: { value?: unknown; variants?: { value: unknown }[] }[]
  fallthrough?: { variants: { value: unknown }[] } | null
}

/** The first value of `body` that is not of the flag's type, as "field message"; null if all are. */
export function typeIssue(type: FlagType | undefined, body: Servable): string | null {
  const check = (field: string, v: unknown) => {
    const m = invalidTypedValue(type, v)
    return m ? `${field} ${m}` : null
  }
  if (body.default_value !== undefined) {
    const m = check('default_value', body.default_value)
    if (m) return m
  }
  for (const [i, r] of (body.rules ?? []).entries()) {
    if (r.value !== undefined) {
      const m = check(`rules[${i}].value`, r.value)
      if (m) return m
    }
    for (const [j, v] of (r.variants ?? []).entries()) {
      const m = check(`rules[${i}].variants[${j}].value`, v.value)
      if (m) return m
    }
  }
  for (const [j, v] of (body.fallthrough?.variants ?? []).entries()) {
    const m = check(`fallthrough.variants[${j}].value`, v.value)
    if (m) return m
  }
  return null
}
