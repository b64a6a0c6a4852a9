// The engine's extended operators (case_insensitive, negate, missing attributes, `now`, CIDR,
// semver) and weighted variants: known answers, stickiness when weights change, uniformity.
import assert from 'node:assert/strict'
import murmurhash from 'murmurhash'
import { clock } from '../src/platform/clock.ts'
import { compileFlag, normalizeContext, type Condition, type FlagDefinition, type Rule } from '../src/flags/engine/rules.ts'
import { compileSplit, type Variant } from '../src/flags/engine/variants.ts'
import { setEngineClock } from '../src/flags/engine/now.ts'

// The engine reads the platform clock only through what the service hands it; here, this test.
setEngineClock(() => clock.nowMs())

const flag = (rules: Rule[], extra: Partial<FlagDefinition> = {}): FlagDefinition => ({ key: 'checkout', enabled: true, type: 'boolean', default_value: false, rules, ...extra })
const holds = (c: Condition, o: Record<string, unknown>) => compileFlag(flag([{ conditions: [c], value: true }])).evaluate(normalizeContext(o)).value === true

describe('flags: extended operators', () => {
  afterEach(() => clock.reset())

  it('string operators take one value or a list, and case_insensitive folds both sides', () => {
    assert.equal(holds({ attribute: 'e', operator: 'starts_with', value: ['a', 'b'] }, { e: 'bob' }), true)
    assert.equal(holds({ attribute: 'e', operator: 'starts_with', value: 'B' }, { e: 'bob' }), false)
    assert.equal(holds({ attribute: 'e', operator: 'starts_with', value: 'B', case_insensitive: true }, { e: 'bob' }), true)
    assert.equal(holds({ attribute: 'e', operator: 'ends_with', value: '.COM', case_insensitive: true }, { e: 'x@y.com' }), true)
    assert.equal(holds({ attribute: 'e', operator: 'eq', value: 'DE', case_insensitive: true }, { e: 'de' }), true)
    assert.equal(holds({ attribute: 'e', operator: 'in', value: ['DE', 'AT'], case_insensitive: true }, { e: 'at' }), true)
    assert.equal(holds({ attribute: 'e', operator: 'matches', value: '^abc$', case_insensitive: true }, { e: 'ABC' }), true)
    assert.equal(holds({ attribute: 'e', operator: 'matches', value: 'b+' }, { e: 'abbbc' }), true) // a search, not a full match
  })

  it('a missing attribute matches only not_in / not_contains; negate inverts everything, missing included', () => {
    assert.equal(holds({ attribute: 'x', operator: 'not_in', value: ['a'] }, {}), true)
    assert.equal(holds({ attribute: 'x', operator: 'not_contains', value: 'a' }, {}), true)
    assert.equal(holds({ attribute: 'x', operator: 'not_contains', value: 'a' }, { x: 'bab' }), false)
    for (const c of [
      { attribute: 'x', operator: 'neq', value: 'a' },
      { attribute: 'x', operator: 'gt', value: 1 },
      { attribute: 'x', operator: 'matches', value: '.*' },
      { attribute: 'x', operator: 'in_cidr', value: '0.0.0.0/0' },
    ] as Condition[]) {
      assert.equal(holds(c, {}), false, c.operator)
      assert.equal(holds({ ...c, negate: true }, {}), true, `${c.operator} negated`)
    }
    assert.equal(holds({ attribute: 'x', operator: 'not_in', value: ['a'], negate: true }, {}), false)
  })

  it('numbers, semver and dates that do not parse never match (negated: always)', () => {
    assert.equal(holds({ attribute: 'n', operator: 'gt', value: 12 }, { n: 13 }), true)
    assert.equal(holds({ attribute: 'n', operator: 'gt', value: 12 }, { n: '13abc' }), false)
    assert.equal(holds({ attribute: 'n', operator: 'lte', value: 12 }, { n: '' }), false)
    assert.equal(holds({ attribute: 'n', operator: 'num_eq', value: 12 }, { n: '12.0' }), true)
    assert.equal(holds({ attribute: 'v', operator: 'semver_gt', value: '1.2.2' }, { v: '1.10.0' }), true) // not string order
    assert.equal(holds({ attribute: 'v', operator: 'semver_gt', value: '1.2.2' }, { v: 'v1.10.0' }), false)
    assert.equal(holds({ attribute: 'v', operator: 'semver_lt', value: '2.0.0' }, { v: '2.0.0-rc.1' }), true)
    assert.equal(holds({ attribute: 'd', operator: 'after', value: '2026-01-01T00:00:00Z' }, { d: '2026-01-01T00:00:01+00:00' }), true)
    assert.equal(holds({ attribute: 'd', operator: 'after', value: '2026-01-01T00:00:00Z' }, { d: 'tomorrow' }), false)
    assert.equal(holds({ attribute: 'd', operator: 'after', value: '2026-01-01T00:00:00Z', negate: true }, { d: 'tomorrow' }), true)
  })

  it('before/after on `now` read the evaluation time, not the context', () => {
    const def = compileFlag(flag([{ conditions: [{ attribute: 'now', operator: 'after', value: '2030-01-01T00:00:00Z' }], value: true }]))
    clock.setNow(new Date('2029-12-31T23:59:59Z'))
    assert.equal(def.evaluate(normalizeContext({ now: '2031-01-01T00:00:00Z' })).value, false)
    clock.setNow(new Date('2030-01-01T00:00:01Z'))
    assert.equal(def.evaluate(normalizeContext({})).value, true)
  })

  it('in_cidr: IPv4, IPv6, bare addresses, IPv4-mapped IPv6; garbage never matches', () => {
    const c: Condition = { attribute: 'ip', operator: 'in_cidr', value: ['10.0.0.0/8', '2001:db8::/32', '192.168.1.7'] }
    assert.equal(holds(c, { ip: '10.1.2.3' }), true)
    assert.equal(holds(c, { ip: '11.1.2.3' }), false)
    assert.equal(holds(c, { ip: '2001:db8:ffff::1' }), true)
    assert.equal(holds(c, { ip: '192.168.1.7' }), true)
    assert.equal(holds(c, { ip: '::ffff:10.9.9.9' }), true)
    assert.equal(holds(c, { ip: 'not-an-ip' }), false)
  })
})

describe('flags: weighted variants', () => {
  const split = (variants: Variant[]) => compileSplit('checkout', { variants }, variants.map((v) => v.name))
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `user-${i}`)

  it('known answers: these ids get these variants, on every replica and release', () => {
    const pick = split([
      { name: 'a', weight: 50, value: 1 },
      { name: 'b', weight: 30, value: 2 },
      { name: 'c', weight: 20, value: 3 },
    ])
    const got = ['user-1', 'user-2', 'user-3', 'user-4', 'user-5', 'u-42', 'alice'].map((u) => pick(normalizeContext({ targetingKey: u })))
    assert.deepEqual(got, KNOWN)
    // The same from the published hash: murmur3 x86 32 (seed 0) of "checkout:variants:<id>", in basis points.
    for (const [i, u] of ['user-1', 'user-2', 'user-3', 'user-4', 'user-5', 'u-42', 'alice'].entries()) {
      const bp = Math.floor((murmurhash.v3(`checkout:variants:${u}`, 0) * 10_000) / 2 ** 32)
      assert.equal(bp < 5_000 ? 'a' : bp < 8_000 ? 'b' : 'c', KNOWN[i])
    }
  })

  it('is uniform within ±1 % over 100,000 ids (50/30/20)', () => {
    const pick = split([
      { name: 'a', weight: 50, value: 1 },
      { name: 'b', weight: 30, value: 2 },
      { name: 'c', weight: 20, value: 3 },
    ])
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 }
    for (const u of ids(100_000)) counts[pick(normalizeContext({ user_id: u }))]!++
    for (const [name, want] of Object.entries({ a: 50, b: 30, c: 20 })) {
      const pct = counts[name]! / 1_000
      assert.ok(Math.abs(pct - want) <= 1, `${name}: ${pct} %`)
    }
  })

  it('moving weight between two neighbouring variants moves only as many users as the change requires', () => {
    const before = split([
      { name: 'a', weight: 50, value: 1 },
      { name: 'b', weight: 30, value: 2 },
      { name: 'c', weight: 20, value: 3 },
    ])
    const after = split([
      { name: 'a', weight: 50, value: 1 },
      { name: 'b', weight: 20, value: 2 },
      { name: 'c', weight: 30, value: 3 },
    ])
    let moved = 0
    for (const u of ids(100_000)) {
      const x = before(normalizeContext({ user_id: u }))
      const y = after(normalizeContext({ user_id: u }))
      if (x !== y) {
        moved++
        assert.equal(`${x}>${y}`, 'b>c') // a's users never move
      }
    }
    assert.ok(Math.abs(moved / 1_000 - 10) <= 1, `${moved / 1_000} % moved`)
  })

  it('stickiness: a chosen attribute, else targetingKey, else user_id; the flag key separates flags', () => {
    const variants: Variant[] = [
      { name: 'a', weight: 50, value: 1 },
      { name: 'b', weight: 50, value: 2 },
    ]
    const byOrg = compileSplit('checkout', { variants, stickiness: 'org' }, ['a', 'b'])
    const byDefault = compileSplit('checkout', { variants }, ['a', 'b'])
    for (const u of ids(200)) {
      assert.equal(byOrg(normalizeContext({ org: u, user_id: 'other' })), byDefault(normalizeContext({ user_id: u })))
      assert.equal(byDefault(normalizeContext({ targetingKey: u, user_id: 'other' })), byDefault(normalizeContext({ user_id: u })))
    }
    const other = compileSplit('pricing', { variants }, ['a', 'b'])
    assert.ok(ids(200).some((u) => other(normalizeContext({ user_id: u })) !== byDefault(normalizeContext({ user_id: u }))))
  })

  it('a rule and the fallthrough serve variants with their names', () => {
    const f = compileFlag({
      key: 'exp',
      enabled: true,
      type: 'string',
      default_value: 'control',
      rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], variants: [{ name: 'only', weight: 100, value: 'pro-x' }] }],
      fallthrough: { variants: [{ name: 'off', weight: 0, value: 'z' }, { name: 'on', weight: 100, value: 'y' }] },
    })
    assert.deepEqual({ ...f.evaluate(normalizeContext({ plan: 'pro', user_id: 'u' })) }, { value: 'pro-x', reason: 'TARGETING_MATCH', rule_index: 0, variant: 'only' })
    assert.deepEqual({ ...f.evaluate(normalizeContext({ user_id: 'u' })) }, { value: 'y', reason: 'DEFAULT', rule_index: null, variant: 'on' })
  })
})

const KNOWN = ['c', 'c', 'a', 'a', 'c', 'b', 'b']
