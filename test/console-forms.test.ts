// The console's form logic without a browser: its operator list is the engine's, what its value
// checks accept the API's schema accepts (so a form never sends what the API must refuse, and
// refuses nothing the API takes, but for RE2 syntax, which is left to the API), a draft becomes the
// body the API stores, and the flags list's search, filters and sort.
import assert from 'node:assert/strict'
import { conditionSchema, flagKeySchema, rulesSchema } from '../src/flags/flag-schema.ts'
import { createSegmentSchema } from '../src/flags/segment-schema.ts'
import { OPERATORS as ENGINE_OPERATORS } from '../src/flags/engine/operators.ts'
import { fromDraft, keyProblem, newRule, toDraft } from '../src/console/flags/draft.ts'
import { filterRows, NO_FILTER, sortRows, toRows } from '../src/console/flags/flag-filter.ts'
import { operatorInfo, OPERATORS, valueOf, valueProblem } from '../src/console/flags/operators.ts'
import { fieldOf } from '../src/console/ui/api.ts'
import type { Flag } from '../src/console/flags/types.ts'

// Texts typed into the value field, by operator: each is checked by the console and by the API.
const SAMPLES: Record<string, string[]> = {
  eq: ['x', '', 'a'.repeat(1024), 'a'.repeat(1025)],
  in: ['DE\nAT', '', '\n \n', 'a'.repeat(1025)],
  contains: ['abc', 'a\nb', ''],
  matches: ['^qa-', '(?=x)', '(a)\\1', 'a'.repeat(257)],
  gt: ['12', '-1.5', '1e3', 'abc', ''],
  percent: ['30', '0', '100', '12.34', '12.345', '101', '-1', ''],
  semver_gte: ['2.0.0', '2.0.0-rc.1', 'v2.0.0', '1.2', ''],
  before: ['2026-01-31T12:00:00Z', '2026-01-31T12:00:00+02:00', '2026-01-31', '2026-01-31T12:00:00'],
  in_cidr: ['10.0.0.0/8', '10.0.0.1', '::1', '2001:db8::/32', '10.0.0.0/33', 'nope', '10.0.0.0/8\n192.168.0.0/16'],
}

describe('flags console: forms and list logic', () => {
  it('offers exactly the engine’s operators', () => {
    assert.deepEqual([...OPERATORS].sort(), [...ENGINE_OPERATORS].sort())
  })

  it('a value the console accepts is one the API accepts, and the reverse (RE2 syntax aside)', () => {
    const disagree: string[] = []
    for (const [op, texts] of Object.entries(SAMPLES)) {
      for (const text of texts) {
        const kind = operatorInfo(op).kind
        const ours = valueProblem(kind, text) === null
        const theirs = conditionSchema.safeParse({ attribute: 'a', operator: op, value: valueOf(kind, text) }).success
        if (ours !== theirs) disagree.push(`${op} ${JSON.stringify(text)}: console ${ours}, API ${theirs}`)
      }
    }
    assert.deepEqual(disagree, [])
    // RE2 syntax is the API's to judge: the console lets it through, the API refuses it.
    assert.equal(valueProblem('regex', 'x{2000}'), null)
    assert.equal(conditionSchema.safeParse({ attribute: 'a', operator: 'matches', value: 'x{2000}' }).success, false)
  })

  it('a flag key or segment name the console accepts is one the API accepts, and the reverse', () => {
    const keys = ['a', 'new-checkout', 'v1.2_x', 'k'.repeat(128), 'k'.repeat(129), '', '.', '..', '...', '.a', 'a.', 'has space', 'ü', 'a/b', '%2E']
    for (const key of keys) {
      const api = flagKeySchema.safeParse(key).success
      const segment = createSegmentSchema.shape.body.safeParse({ name: key, conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }).success
      assert.equal(keyProblem(key) === null, api, `flag key ${JSON.stringify(key)}: console ${keyProblem(key)}, API ${api}`)
      assert.equal(segment, api, `segment name ${JSON.stringify(key)} follows flag keys`)
    }
  })

  it('a draft round-trips to the body the API stores, typed values included; problems are named by the API’s field paths', () => {
    const flag: Flag = {
      key: 'f', name: 'F', enabled: true, type: 'number', default_value: 3, created_at: '', updated_at: '',
      rules: [
        { conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'], case_insensitive: true }, { attribute: 'v', operator: 'semver_gte', value: '2.0.0', negate: true }], segments: ['staff'], value: 5 },
        { conditions: [{ attribute: 'user_id', operator: 'percent', value: 30 }], variants: [{ name: 'a', weight: 50.5, value: 1 }, { name: 'b', weight: 49.5, value: 2 }], stickiness: 'account_id' },
      ],
      fallthrough: { variants: [{ name: 'x', weight: 100, value: 9 }] },
    }
    const { body, problems } = fromDraft(toDraft(flag), 'number')
    assert.deepEqual(problems, {})
    assert.deepEqual(body, { default_value: 3, rules: flag.rules, fallthrough: flag.fallthrough })
    assert.equal(rulesSchema.safeParse(body.rules).success, true)

    const d = toDraft(flag)
    d.default_value = 'three'
    d.rules[0]!.conditions[1]!.text = 'v2'
    d.rules[1]!.split.variants[1]!.weight = '40'
    d.rules.push(newRule('number'))
    assert.deepEqual(fromDraft(d, 'number').problems, {
      default_value: 'Give a number (the flag is of type number)',
      'rules[0].conditions[1].value': 'Not a SemVer 2.0.0 version (e.g. 2.1.0, no leading v)',
      'rules[1].variants': 'The weights add up to 90.5, not 100',
      'rules[2].conditions[0].value': 'Give at least one value',
    })
  })

  it('reads the field an API message names', () => {
    assert.equal(fieldOf('rules[2].conditions[0].value must be a valid RE2 regular expression (…)'), 'rules[2].conditions[0].value')
    assert.equal(fieldOf('key must be 1-128 characters'), 'key')
    assert.equal(fieldOf('Flag not found'), null)
    assert.equal(fieldOf('A flag with key "x" already exists'), null)
  })

  it('search, filters and sort of the flags list', () => {
    const now = Date.parse('2026-11-28T12:00:00Z')
    const f = (key: string, extra: Partial<Flag>): Flag => ({ key, name: key, enabled: false, default_value: 'x', rules: [], created_at: '', updated_at: '2026-11-01T00:00:00Z', ...extra })
    const rows = toRows({
      production: [
        f('new-checkout', { type: 'boolean', tags: ['checkout'], enabled: true, last_evaluated_at: { production: '2026-11-28T11:00:00Z', staging: null } }),
        f('dark-mode', { type: 'boolean', tags: ['ui'], last_evaluated_at: { production: '2026-11-01T00:00:00Z' }, updated_at: '2026-11-20T00:00:00Z' }),
        f('limit', { type: 'number', name: 'Checkout limit', last_evaluated_at: null }),
      ],
      staging: [f('new-checkout', { enabled: false }), f('dark-mode', { enabled: true }), f('limit', {})],
    })
    const keys = (filter: Partial<typeof NO_FILTER>) => filterRows(rows, { ...NO_FILTER, ...filter }, now).map((r) => r.flag.key)
    assert.deepEqual(keys({ q: 'CHECKOUT' }), ['new-checkout', 'limit'])
    assert.deepEqual(keys({ type: 'boolean' }), ['new-checkout', 'dark-mode'])
    assert.deepEqual(keys({ type: 'untyped' }), [])
    assert.deepEqual(keys({ state: 'on' }), ['new-checkout'])
    assert.deepEqual(keys({ env: 'staging', state: 'on' }), ['dark-mode'])
    assert.deepEqual(keys({ tag: 'ui' }), ['dark-mode'])
    assert.deepEqual(keys({ staleDays: 7 }), ['dark-mode', 'limit'])
    assert.deepEqual(keys({ staleDays: 30 }), ['limit'])
    assert.deepEqual(sortRows(rows, 'key').map((r) => r.flag.key), ['dark-mode', 'limit', 'new-checkout'])
    assert.deepEqual(sortRows(rows, 'updated').map((r) => r.flag.key), ['dark-mode', 'new-checkout', 'limit'])
    assert.deepEqual(sortRows(rows, 'last_evaluated').map((r) => r.flag.key), ['new-checkout', 'dark-mode', 'limit'])
  })
})
