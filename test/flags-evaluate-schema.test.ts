// The evaluate hot path's hand-written body check must accept exactly what the zod schema accepts
// (rejected bodies then get the schema's own message): checked side by side on edge cases.
import assert from 'node:assert/strict'
import { checkEvaluateBody, evaluateBodySchema, MAX_CONTEXT_ATTRIBUTES, MAX_EVAL_FLAGS } from '../src/flags/sdk/evaluate-schema.ts'

const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, i]))

const bodies: unknown[] = [
  {},
  null,
  [],
  'x',
  { sdk_key: 1 },
  { sdk_key: 'k' },
  { sdk_key: 'k', extra: { deep: [1] } },
  { sdk_key: 'k', flags: [] },
  { sdk_key: 'k', flags: ['a', 'ü🚀', ''] },
  { sdk_key: 'k', flags: null },
  { sdk_key: 'k', flags: 'a' },
  { sdk_key: 'k', flags: { 0: 'a' } },
  { sdk_key: 'k', flags: ['a', 1] },
  { sdk_key: 'k', flags: ['x'.repeat(128)] },
  { sdk_key: 'k', flags: ['x'.repeat(129)] },
  { sdk_key: 'k', flags: Array(MAX_EVAL_FLAGS).fill('f') },
  { sdk_key: 'k', flags: Array(MAX_EVAL_FLAGS + 1).fill('f') },
  { sdk_key: 'k', context: {} },
  { sdk_key: 'k', context: null },
  { sdk_key: 'k', context: [] },
  { sdk_key: 'k', context: 'x' },
  { sdk_key: 'k', context: { a: 'x', b: 1.5, c: true, d: null, e: -0 } },
  { sdk_key: 'k', context: { a: {} } },
  { sdk_key: 'k', context: { a: [] } },
  { sdk_key: 'k', context: { a: Infinity } },
  { sdk_key: 'k', context: { '': 1 } },
  { sdk_key: 'k', context: { ['k'.repeat(128)]: 1 } },
  { sdk_key: 'k', context: { ['k'.repeat(129)]: 1 } },
  { sdk_key: 'k', context: { a: 'v'.repeat(2048) } },
  { sdk_key: 'k', context: { a: 'v'.repeat(2049) } },
  { sdk_key: 'k', context: many(MAX_CONTEXT_ATTRIBUTES) },
  { sdk_key: 'k', context: many(MAX_CONTEXT_ATTRIBUTES + 1) },
  JSON.parse('{"sdk_key":"k","context":{"__proto__":"x","constructor":"y"}}'),
  JSON.parse('{"sdk_key":"k","context":{"__proto__":{}}}'),
]

describe('flags: evaluate body check (hot path) agrees with the schema', () => {
  bodies.forEach((b, i) => {
    it(`case ${i}: ${JSON.stringify(b)?.slice(0, 60)}`, () => {
      const zodOk = evaluateBodySchema.safeParse(b).success
      const fast = checkEvaluateBody(b)
      // The fast check may decline a valid body (the schema then parses it), never accept an invalid one.
      if (fast !== null) assert.equal(zodOk, true)
      // On ordinary JSON bodies (no "__proto__" keys) the two agree exactly.
      if (!JSON.stringify(b ?? null).includes('__proto__')) assert.equal(fast !== null, zodOk)
    })
  })
})
