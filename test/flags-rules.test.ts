// The pure rule engine: every operator, rule order, disabled flags, missing attributes, and
// property tests of the percentage rollout (determinism, monotonicity, uniformity).
import assert from 'node:assert/strict'
import fc from 'fast-check'
import murmurhash from 'murmurhash'
import { bucketBasisPoints, bucketOf, inRollout, murmur3, rolloutBuckets } from '../src/flags/engine/percent-bucket.ts'
import {
  compileFlag,
  evaluateFlag,
  normalizeContext,
  EMPTY_CONTEXT,
  type Condition,
  type FlagDefinition,
  type Rule,
} from '../src/flags/engine/rules.ts'

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

  // Known answers, computed once outside this code (a BigInt murmur3 written from the published
  // algorithm, cross-checked with the murmurhash package) and pinned: a change to the hash input,
  // the scaling or the rounding changes at least one of them.
  const KNOWN: Array<[flagKey: string, value: string, basisPoints: number]> = [
    ['checkout', 'user-42', 7713],
    ['checkout', 'user-1', 7229],
    ['checkout', 'alice', 4869],
    ['new-ui', 'user-42', 5358],
    ['checkout', 'ünïcødé', 3983],
    ['checkout', '中文用户', 679],
    ['a', 'b', 6083],
    ['checkout', '', 2658],
    ['checkout', 'user-340', 0],
    ['checkout', 'user-605', 9999],
    ['checkout', 'user-5271', 2500],
    // U+0080, the first character that is two bytes in UTF-8: the ASCII fast path must hand it on.
    ['checkout', '\u0080x', 7832],
    ['checkout', 'a\u00ff', 7877],
  ]

  it('bucket = floor(h * 10000 / 2^32) / 100 over flagKey + value (known answers)', () => {
    for (const [k, v, bp] of KNOWN) {
      assert.equal(bucketBasisPoints(k, v), bp, `${k} + ${v}`)
      assert.equal(rolloutBuckets(k)(v), bp, `${k} + ${v} (precomputed)`)
      assert.equal(bucketOf(k, v), bp / 100, `${k} + ${v} as a percentage`)
    }
  })

  // Users found by search to sit exactly on a boundary of flag "checkout": bucket 25.00 (two of
  // them), 50.00, 12.34, and the neighbours 24.99 / 25.01. A rollout of p% takes bucket < p.
  const ON = { 'user-5271': 25, 'user-10421': 25, 'user-3294': 50, 'user-114': 12.34, 'user-645': 24.99, 'user-8434': 25.01 }

  it('a user exactly on the rollout boundary is out; the next hundredth of a percent takes them in', () => {
    for (const [id, b] of Object.entries(ON)) {
      assert.equal(bucketOf('checkout', id), b, id)
      assert.equal(inRollout('checkout', id, b), false, `${id} at ${b}%`)
      assert.equal(inRollout('checkout', id, b + 0.01), true, `${id} at ${b + 0.01}%`)
      assert.equal(inRollout('checkout', id, b - 0.01), false, `${id} at ${b - 0.01}%`)
    }
    // Through the rule engine, the path evaluation takes.
    const at = (p: number) => one({ attribute: 'user_id', operator: 'percent', value: p })
    assert.deepEqual(
      ['user-645', 'user-5271', 'user-10421', 'user-8434'].map((id) => served(at(25), { user_id: id }).reason),
      ['TARGETING_MATCH', 'DEFAULT', 'DEFAULT', 'DEFAULT'],
    )
    assert.deepEqual(
      ['user-645', 'user-5271', 'user-10421', 'user-8434'].map((id) => served(at(25.01), { user_id: id }).reason),
      ['TARGETING_MATCH', 'TARGETING_MATCH', 'TARGETING_MATCH', 'DEFAULT'],
    )
    assert.equal(served(at(50), { user_id: 'user-3294' }).reason, 'DEFAULT')
    assert.equal(served(at(12.34), { user_id: 'user-114' }).reason, 'DEFAULT')
    assert.equal(served(at(12.35), { user_id: 'user-114' }).reason, 'TARGETING_MATCH')
    // A rollout of 0 % takes nobody, not even bucket 0.
    assert.equal(served(at(0), { user_id: 'user-340' }).reason, 'DEFAULT')
    // Bucket 0 is in any positive rollout; bucket 99.99 only at 100 %.
    assert.equal(served(at(0.01), { user_id: 'user-340' }).reason, 'TARGETING_MATCH')
    assert.equal(served(at(99.99), { user_id: 'user-605' }).reason, 'DEFAULT')
    assert.equal(served(at(100), { user_id: 'user-605' }).reason, 'TARGETING_MATCH')
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
    assert.equal(served(one({ attribute: 'beta', operator: 'eq', value: 'false' }), { beta: false }).reason, 'TARGETING_MATCH')
    // Numbers JSON cannot carry (NaN, ±Infinity) are left out of the context, like objects.
    assert.deepEqual({ ...normalizeContext({ a: NaN, b: Infinity, c: -Infinity, d: 1.5 }) }, { d: '1.5' })
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
