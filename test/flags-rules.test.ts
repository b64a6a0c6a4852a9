// The pure rule engine: every operator, rule order, disabled flags, missing attributes, and
// property tests of the percentage rollout (determinism, monotonicity, uniformity).
import assert from 'node:assert/strict'
import fc from 'fast-check'
import murmurhash from 'murmurhash'
import { bucketBasisPoints, bucketOf, inRollout, murmur3, rolloutBuckets } from '../src/flags/percent-bucket.ts'
import {
  compileFlag,
  evaluateFlag,
  normalizeContext,
  EMPTY_CONTEXT,
  type Condition,
  type FlagDefinition,
  type Rule,
} from '../src/flags/rules.ts'

const flag = (rules: Rule[], extra: Partial<FlagDefinition> = {}): FlagDefinition => ({
  key: 'checkout',
  enabled: true,
  default_value: 'true',
  rules,
  ...extra,
})
const one = (c: Condition, value = 'on'): FlagDefinition => flag([{ conditions: [c], value }])
const ctx = (o: Record<string, unknown>) => normalizeContext(o)
const served = (def: FlagDefinition, o: Record<string, unknown>) => evaluateFlag(def, ctx(o))

describe('flags: murmur3 and buckets', () => {
  it('is MurmurHash3 x86 32-bit with seed 0 (published test vectors)', () => {
    assert.equal(murmur3(''), 0)
    assert.equal(murmur3('hello'), 0x248bfa47)
    assert.equal(murmur3('The quick brown fox jumps over the lazy dog'), 0x2e4ff723)
    // Same as the library on its own, for non-ASCII (UTF-8 bytes) and for keys past the scratch buffer.
    for (const s of ['héllo', '中文用户', 'x'.repeat(5_000), '🚀'.repeat(300)]) assert.equal(murmur3(s), murmurhash.v3(s, 0))
  })

  it('bucket = floor(h * 10000 / 2^32) / 100 over flagKey + value', () => {
    const h = murmurhash.v3('checkoutuser-42', 0)
    assert.equal(bucketBasisPoints('checkout', 'user-42'), Math.floor((h * 10000) / 2 ** 32))
    assert.equal(bucketOf('checkout', 'user-42'), Math.floor((h * 10000) / 2 ** 32) / 100)
  })

  it("a flag's precomputed rollout hash gives bucketBasisPoints for any key and value (ASCII, unicode, every length mod 4)", () => {
    for (const unit of ['grapheme-ascii', 'grapheme', 'binary'] as const) {
      fc.assert(
        fc.property(fc.string({ unit, maxLength: 40 }), fc.string({ unit, maxLength: 40 }), (k, v) => {
          assert.equal(rolloutBuckets(k)(v), bucketBasisPoints(k, v))
        }),
        { numRuns: 500 },
      )
    }
    // Every split of key and value bytes across 4-byte blocks, and an ASCII value after a unicode key.
    for (const k of ['', 'a', 'ab', 'abc', 'abcd', 'feature-1', 'clé', '🚀x']) {
      const buckets = rolloutBuckets(k)
      for (const v of ['', 'u', 'us', 'use', 'user', 'user-42', 'üser', 'user-🚀']) assert.equal(buckets(v), bucketBasisPoints(k, v), `${k} + ${v}`)
    }
  })

  it('percent 0 never matches, percent 100 always matches', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (k, v) => {
        assert.equal(inRollout(k, v, 0), false)
        assert.equal(inRollout(k, v, 100), true)
        const b = bucketOf(k, v)
        assert.ok(b >= 0 && b <= 99.99)
      }),
    )
  })
})

describe('flags: operators', () => {
  it('eq matches equal strings only, comparing as strings', () => {
    const def = one({ attribute: 'country', operator: 'eq', value: 'DE' })
    assert.equal(served(def, { country: 'DE' }).reason, 'TARGETING_MATCH')
    assert.equal(served(def, { country: 'de' }).reason, 'DEFAULT')
    assert.equal(served(def, { country: 'DEU' }).reason, 'DEFAULT')
    const num = one({ attribute: 'age', operator: 'eq', value: '30' })
    assert.equal(served(num, { age: 30 }).reason, 'TARGETING_MATCH')
    assert.equal(served(num, { age: '30' }).reason, 'TARGETING_MATCH')
    const bool = one({ attribute: 'beta', operator: 'eq', value: 'true' })
    assert.equal(served(bool, { beta: true }).reason, 'TARGETING_MATCH')
    assert.equal(served(bool, { beta: false }).reason, 'DEFAULT')
  })

  it('neq matches present, different values', () => {
    const def = one({ attribute: 'plan', operator: 'neq', value: 'free' })
    assert.equal(served(def, { plan: 'pro' }).reason, 'TARGETING_MATCH')
    assert.equal(served(def, { plan: 'free' }).reason, 'DEFAULT')
    assert.equal(served(def, {}).reason, 'DEFAULT')
  })

  it('contains is a substring test', () => {
    const def = one({ attribute: 'email', operator: 'contains', value: '@acme.' })
    assert.equal(served(def, { email: 'ann@acme.com' }).reason, 'TARGETING_MATCH')
    assert.equal(served(def, { email: 'ann@acme-corp.com' }).reason, 'DEFAULT')
    assert.equal(served(one({ attribute: 'name', operator: 'contains', value: '中' }), { name: '中文' }).reason, 'TARGETING_MATCH')
  })

  it('in matches any listed value', () => {
    const def = one({ attribute: 'country', operator: 'in', value: ['DE', 'AT', '1'] })
    assert.equal(served(def, { country: 'AT' }).reason, 'TARGETING_MATCH')
    assert.equal(served(def, { country: 1 }).reason, 'TARGETING_MATCH')
    assert.equal(served(def, { country: 'CH' }).reason, 'DEFAULT')
  })

  it('percent buckets the attribute with the flag key', () => {
    const def = one({ attribute: 'user_id', operator: 'percent', value: 50 })
    for (let i = 0; i < 200; i++) {
      const id = `u${i}`
      const expected = bucketOf('checkout', id) < 50
      assert.equal(served(def, { user_id: id }).reason === 'TARGETING_MATCH', expected)
    }
    // Another flag key buckets the same user differently (not all users land on the same side).
    const differs = Array.from({ length: 200 }, (_, i) => `u${i}`).some((id) => bucketOf('checkout', id) < 50 !== bucketOf('other', id) < 50)
    assert.ok(differs)
  })

  it('a missing attribute never matches any operator', () => {
    const conds: Condition[] = [
      { attribute: 'x', operator: 'eq', value: '' },
      { attribute: 'x', operator: 'neq', value: 'a' },
      { attribute: 'x', operator: 'contains', value: 'a' },
      { attribute: 'x', operator: 'in', value: ['', 'a'] },
      { attribute: 'x', operator: 'percent', value: 100 },
    ]
    for (const c of conds) {
      for (const context of [{}, { x: null }, { x: { nested: 1 } }, { x: ['a'] }, { y: 'a' }]) {
        const r = served(one(c), context)
        assert.equal(r.reason, 'DEFAULT', `${c.operator} with ${JSON.stringify(context)}`)
        assert.equal(r.value, 'true')
      }
    }
  })

  it('inherited names are not attributes', () => {
    for (const attribute of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      assert.equal(served(one({ attribute, operator: 'neq', value: 'x' }), {}).reason, 'DEFAULT')
      assert.equal(served(one({ attribute, operator: 'neq', value: 'x' }), { country: 'DE' }).reason, 'DEFAULT')
      assert.equal(attribute in normalizeContext({ country: 'DE' }), false, attribute)
    }
  })

  it('a context may name an attribute like an inherited name; it is an ordinary attribute', () => {
    const context = JSON.parse('{"constructor":"c","toString":"t","__proto__":"p"}')
    for (const [attribute, value] of [['constructor', 'c'], ['toString', 't'], ['__proto__', 'p']]) {
      assert.equal(served(one({ attribute: attribute!, operator: 'eq', value: value! }), context).reason, 'TARGETING_MATCH', attribute)
    }
    assert.equal(Object.getPrototypeOf(Object.getPrototypeOf(normalizeContext(context))), null)
  })
})

describe('flags: rules', () => {
  it('ANDs the conditions of a rule', () => {
    const def = flag([
      {
        conditions: [
          { attribute: 'country', operator: 'eq', value: 'DE' },
          { attribute: 'plan', operator: 'in', value: ['pro', 'business'] },
        ],
        value: 'on',
      },
    ])
    assert.equal(served(def, { country: 'DE', plan: 'pro' }).value, 'on')
    assert.equal(served(def, { country: 'DE', plan: 'free' }).reason, 'DEFAULT')
    assert.equal(served(def, { plan: 'pro' }).reason, 'DEFAULT')
  })

  it('serves the first matching rule with its index; no match serves the default value', () => {
    const def = flag(
      [
        { conditions: [{ attribute: 'country', operator: 'eq', value: 'FR' }], value: 'fr' },
        { conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'FR'] }], value: 'de-or-fr' },
        { conditions: [], value: 'everyone' },
      ],
      { default_value: 'never' },
    )
    assert.deepEqual(served(def, { country: 'FR' }), { value: 'fr', reason: 'TARGETING_MATCH', rule_index: 0 })
    assert.deepEqual(served(def, { country: 'DE' }), { value: 'de-or-fr', reason: 'TARGETING_MATCH', rule_index: 1 })
    assert.deepEqual(served(def, {}), { value: 'everyone', reason: 'TARGETING_MATCH', rule_index: 2 })
    assert.deepEqual(served(flag([], { default_value: 'blue' }), {}), { value: 'blue', reason: 'DEFAULT', rule_index: null })
  })

  it('a disabled flag serves "false" and skips its rules', () => {
    const def = flag([{ conditions: [], value: 'on' }], { enabled: false, default_value: 'blue' })
    assert.deepEqual(served(def, { anything: 1 }), { value: 'false', reason: 'DISABLED', rule_index: null })
    assert.deepEqual(evaluateFlag(def, EMPTY_CONTEXT), { value: 'false', reason: 'DISABLED', rule_index: null })
  })

  it('compiled results are shared, not rebuilt per call', () => {
    const f = compileFlag(flag([{ conditions: [{ attribute: 'a', operator: 'eq', value: '1' }], value: 'x' }]))
    assert.equal(f.evaluate(ctx({ a: 1 })), f.evaluate(ctx({ a: '1' })))
    assert.ok(Object.isFrozen(f.evaluate(EMPTY_CONTEXT)))
  })
})

describe('flags: properties', () => {
  const attr = fc.constantFrom('a', 'b', 'c', 'd')
  const value = fc.string({ maxLength: 6 })
  const condition: fc.Arbitrary<Condition> = fc.oneof(
    fc.record({ attribute: attr, operator: fc.constantFrom('eq' as const, 'neq' as const, 'contains' as const), value }),
    fc.record({ attribute: attr, operator: fc.constant('in' as const), value: fc.array(value, { minLength: 1, maxLength: 4 }) }),
    fc.record({ attribute: attr, operator: fc.constant('percent' as const), value: fc.double({ min: 0, max: 100, noNaN: true }) }),
  )
  const rules = fc.array(fc.record({ conditions: fc.array(condition, { maxLength: 3 }), value }), { maxLength: 5 })
  const context = fc.dictionary(attr, fc.oneof(value, fc.integer(), fc.boolean()), { maxKeys: 4 })

  it('is deterministic: same flag and context, same result, also after recompiling', () => {
    fc.assert(
      fc.property(rules, context, fc.boolean(), (rs, c, enabled) => {
        const def = flag(rs, { enabled })
        const a = compileFlag(def).evaluate(ctx(c))
        const b = compileFlag(structuredClone(def)).evaluate(ctx({ ...c }))
        assert.deepEqual(a, b)
      }),
    )
  })

  it('first match wins: the served rule is the first whose conditions all hold', () => {
    // Each condition is built to hold or not by construction, which gives the expected index.
    const plan = fc.array(fc.array(fc.boolean(), { maxLength: 3 }), { minLength: 1, maxLength: 6 })
    fc.assert(
      fc.property(plan, fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.string({ minLength: 1, maxLength: 5 }), { minKeys: 3 }), (shape, c) => {
        const keys = Object.keys(c)
        const rs: Rule[] = shape.map((conds, i) => ({
          value: `r${i}`,
          conditions: conds.map((holds, j) => {
            const a = keys[j % keys.length]!
            return holds ? { attribute: a, operator: 'eq' as const, value: c[a]! } : { attribute: a, operator: 'neq' as const, value: c[a]! }
          }),
        }))
        const expected = shape.findIndex((conds) => conds.every(Boolean))
        const r = served(flag(rs), c)
        if (expected === -1) assert.deepEqual(r, { value: 'true', reason: 'DEFAULT', rule_index: null })
        else assert.deepEqual(r, { value: `r${expected}`, reason: 'TARGETING_MATCH', rule_index: expected })
      }),
    )
  })

  it('a condition on an attribute absent from the context never matches', () => {
    fc.assert(
      fc.property(condition, context, (cond, c) => {
        const absent = { ...cond, attribute: 'zz_absent' } as Condition
        assert.equal(served(one(absent), c).reason, 'DEFAULT')
      }),
    )
  })

  it('a disabled flag always serves "false"', () => {
    fc.assert(
      fc.property(rules, context, (rs, c) => {
        assert.deepEqual(served(flag(rs, { enabled: false }), c), { value: 'false', reason: 'DISABLED', rule_index: null })
      }),
    )
  })

  it('raising a percentage only adds users (30 → 40 keeps everyone who was in)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true }), (key, id, p, q) => {
        const [lo, hi] = p <= q ? [p, q] : [q, p]
        if (inRollout(key, id, lo)) assert.ok(inRollout(key, id, hi))
      }),
      { numRuns: 1_000 },
    )
    const at = (p: number) => one({ attribute: 'user_id', operator: 'percent', value: p })
    const f30 = compileFlag(at(30))
    const f40 = compileFlag(at(40))
    let in30 = 0
    for (let i = 0; i < 20_000; i++) {
      const c = ctx({ user_id: `user-${i}` })
      if (f30.evaluate(c).reason === 'TARGETING_MATCH') {
        in30++
        assert.equal(f40.evaluate(c).reason, 'TARGETING_MATCH', `user-${i} left the rollout when it grew`)
      }
    }
    assert.ok(in30 > 5_000)
  })

  it('is uniform: 100,000 ids land within ±1 % of the target', () => {
    for (const [flagKey, p] of [['checkout', 10], ['new-ui', 25], ['pricing-v2', 50], ['beta', 90], ['x', 33.33]] as const) {
      const f = compileFlag({ ...one({ attribute: 'user_id', operator: 'percent', value: p }), key: flagKey })
      let hits = 0
      for (let i = 0; i < 100_000; i++) if (f.evaluate(ctx({ user_id: `user-${i}` })).reason === 'TARGETING_MATCH') hits++
      const share = (hits / 100_000) * 100
      assert.ok(Math.abs(share - p) <= 1, `${flagKey} at ${p} %: ${share.toFixed(2)} %`)
    }
  })
})
