// The engine's shortcuts (docs/flags-evaluation.md, "The evaluation hot path") answer exactly as the plain
// definitions do: the
// anchored-literal prefilter of `matches` against RE2 itself, the one-closure operators against
// their definitions, and cost-ordered conditions against every order of the same conditions.
import assert from 'node:assert/strict'
import { RE2JS } from 're2js'
import { compileFlag, normalizeContext, type Condition, type FlagDefinition } from '../src/flags/engine/rules.ts'
import { anchoredLiteral } from '../src/flags/engine/operators.ts'

const holds = (c: Condition, o: Record<string, unknown>) => {
  const def: FlagDefinition = { key: 'f', enabled: true, type: 'boolean', default_value: false, rules: [{ conditions: [c], value: true }] }
  return compileFlag(def).evaluate(normalizeContext(o)).value === true
}

const VALUES = ['', 'q', 'qa', 'qa-', 'qa-1', 'QA-1', 'xqa-1', 'qa-\nqa', 'qaa', 'qb', 'https://x.example/a', 'http://x', 'a+b', 'ab', 'abbb', 'ü-qa', 'qa-ü', '7', 'user-17', 'user-7', 'admin']

describe('flags engine: shortcuts give the plain answers', () => {
  it('anchoredLiteral finds the prefix a match must start with, and nothing when unsure', () => {
    assert.deepEqual(anchoredLiteral('^qa-'), { prefix: 'qa-', whole: true })
    assert.deepEqual(anchoredLiteral('^https://x'), { prefix: 'https://x', whole: true })
    assert.deepEqual(anchoredLiteral('^user-[0-9]+7$'), { prefix: 'user-', whole: false })
    assert.deepEqual(anchoredLiteral('^abc?'), { prefix: 'ab', whole: false }) // the quantifier takes "c" back
    assert.deepEqual(anchoredLiteral('^ab{2}'), { prefix: 'a', whole: false })
    assert.equal(anchoredLiteral('^a*'), null)
    assert.equal(anchoredLiteral('qa-'), null) // not anchored
    assert.equal(anchoredLiteral('^qa|admin'), null) // an alternative escapes the anchor
    assert.equal(anchoredLiteral('(?i)^qa'), null)
    assert.equal(anchoredLiteral('^.qa'), null)
    assert.equal(anchoredLiteral('^\\d'), null)
  })

  it('matches with the prefilter answers as an RE2 search does', () => {
    const patterns = ['^qa-', '^qa', '^qa-[0-9]+$', '^user-[0-9]*7$', '^a+b', '^ab?', '^ab{2,}', '^qa|admin', '^http(s)?://', '^qa-.$', '^u', '^7', '^qa-\\n']
    for (const p of patterns) {
      const re = RE2JS.compile(p)
      for (const v of VALUES) {
        assert.equal(holds({ attribute: 'x', operator: 'matches', value: p }, { x: v }), re.matcher(v).find(), `${p} on ${JSON.stringify(v)}`)
        // The same value asked twice (second time from the memo, where there is one).
        assert.equal(holds({ attribute: 'x', operator: 'matches', value: p }, { x: v }), re.matcher(v).find())
      }
    }
  })

  it('in, not_in, starts_with, ends_with and the number comparisons answer by their definitions', () => {
    const list = ['qa', 'ab', '7']
    const num = (v: string) => (v.trim() === '' ? NaN : Number(v))
    for (const v of [...VALUES, '7.0', '-1', '1e3', ' ', '0x10', 'NaN', 'Infinity']) {
      assert.equal(holds({ attribute: 'x', operator: 'in', value: list }, { x: v }), list.includes(v), `in ${v}`)
      assert.equal(holds({ attribute: 'x', operator: 'not_in', value: list }, { x: v }), !list.includes(v), `not_in ${v}`)
      assert.equal(holds({ attribute: 'x', operator: 'starts_with', value: 'qa' }, { x: v }), v.startsWith('qa'))
      assert.equal(holds({ attribute: 'x', operator: 'starts_with', value: ['qa'] }, { x: v }), v.startsWith('qa'))
      assert.equal(holds({ attribute: 'x', operator: 'starts_with', value: ['qa', 'ad'] }, { x: v }), v.startsWith('qa') || v.startsWith('ad'))
      assert.equal(holds({ attribute: 'x', operator: 'ends_with', value: '-1' }, { x: v }), v.endsWith('-1'))
      assert.equal(holds({ attribute: 'x', operator: 'gt', value: 5 }, { x: v }), num(v) > 5, `gt ${v}`)
      assert.equal(holds({ attribute: 'x', operator: 'gte', value: 7 }, { x: v }), num(v) >= 7, `gte ${v}`)
      assert.equal(holds({ attribute: 'x', operator: 'lt', value: 7 }, { x: v }), num(v) < 7, `lt ${v}`)
      assert.equal(holds({ attribute: 'x', operator: 'lte', value: 0 }, { x: v }), num(v) <= 0, `lte ${v}`)
    }
    // A missing attribute: only not_in matches.
    for (const op of ['in', 'starts_with', 'ends_with'] as const) assert.equal(holds({ attribute: 'x', operator: op, value: ['qa'] } as Condition, {}), false, op)
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) assert.equal(holds({ attribute: 'x', operator: op, value: 1 }, {}), false, op)
    assert.equal(holds({ attribute: 'x', operator: 'not_in', value: list }, {}), true)
  })

  it('a rule answers the same whatever order its conditions are listed in (the engine tests cheap ones first)', () => {
    const conditions: Condition[] = [
      { attribute: 'v', operator: 'semver_gte', value: '2.0.0' },
      { attribute: 'u', operator: 'matches', value: '^qa-' },
      { attribute: 'c', operator: 'in', value: ['DE', 'AT'] },
      { attribute: 'u', operator: 'percent', value: 50 },
    ]
    const orders = [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]].map((o) => o.map((i) => conditions[i]!))
    const flags = orders.map((cs) => compileFlag({ key: 'f', enabled: true, type: 'boolean', default_value: false, rules: [{ conditions: cs, value: true }] }))
    let matched = 0
    for (let i = 0; i < 2_000; i++) {
      const ctx = normalizeContext({ v: ['1.9.9', '2.0.0', '2.1.0-rc.1', 'x'][i & 3], u: i % 3 ? `qa-${i}` : `u-${i}`, c: ['DE', 'FR', 'AT'][i % 3 === 0 ? 0 : (i >> 2) % 3] })
      const answers = flags.map((f) => f.evaluate(ctx).value)
      assert.ok(answers.every((a) => a === answers[0]), `context ${i}`)
      if (answers[0] === true) matched++
    }
    assert.ok(matched > 100 && matched < 1_000, `matched ${matched}`) // the rule is neither always nor never true
  })
})
