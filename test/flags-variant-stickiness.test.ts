// Sticky weighted variants (docs/flags.md, "Weighted variants"): each variant owns buckets kept
// with the flag, so a change of
// weights moves exactly the share of users the change requires (the total weight that shrank) and
// no user leaves a variant whose weight did not shrink; uniform within ±1 % over 100,000 ids after
// any number of changes; splits stored before allocations keep every assignment. Over HTTP: the
// buckets are stored on write, never shown, and a rule inserted in front keeps its split's users.
import assert from 'node:assert/strict'
import { normalizeContext } from '../src/flags/engine/rules.ts'
import { compileSplit, type Variant } from '../src/flags/engine/variants.ts'
import { reallocate } from '../src/flags/engine/variant-allocation.ts'
import { compileFlag } from '../src/flags/engine/rules.ts'
import { definitionOf, getFlag } from '../src/flags/store/flag-store.ts'
import { call, get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

const IDS = Array.from({ length: 100_000 }, (_, i) => normalizeContext({ user_id: `user-${i}` }))
const v = (name: string, weight: number): Variant => ({ name, weight, value: name })
const assign = (variants: Variant[]) => {
  const pick = compileSplit('checkout', { variants }, variants.map((x) => x.name))
  return IDS.map((ctx) => pick(ctx))
}

function assertUniform(got: string[], variants: Variant[]) {
  const counts = new Map<string, number>()
  for (const g of got) counts.set(g, (counts.get(g) ?? 0) + 1)
  for (const x of variants) {
    const pct = ((counts.get(x.name) ?? 0) / got.length) * 100
    assert.ok(Math.abs(pct - x.weight) <= 1, `${x.name}: ${pct.toFixed(2)} % for weight ${x.weight}`)
  }
}

/** Applies the change; checks the users moved = the weight that shrank (±0.5 points), and who may move. */
function change(before: Variant[], nextWeights: Variant[]) {
  const after = reallocate(before, nextWeights)
  const a = assign(before)
  const b = assign(after)
  const old = new Map(before.map((x) => [x.name, x.weight]))
  const shrank = (name: string) => (nextWeights.find((x) => x.name === name)?.weight ?? 0) < old.get(name)!
  const required = before.reduce((n, x) => n + Math.max(0, x.weight - (nextWeights.find((y) => y.name === x.name)?.weight ?? 0)), 0)
  let moved = 0
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue
    moved++
    assert.ok(shrank(a[i]!), `user ${i} left ${a[i]}, whose weight did not shrink, for ${b[i]}`)
  }
  const pct = (moved / a.length) * 100
  assert.ok(Math.abs(pct - required) <= 0.5, `${pct.toFixed(2)} % moved, ${required} % required`)
  assertUniform(b, after)
  return after
}

describe('flags: sticky variant allocation', () => {
  const start = () => reallocate(undefined, [v('a', 50), v('b', 30), v('c', 20)])

  it('a new split is laid out contiguously in the listed order, exactly as splits stored without buckets', () => {
    const s = start()
    assert.deepEqual(s.map((x) => x.buckets), [[[0, 5_000]], [[5_000, 8_000]], [[8_000, 10_000]]])
    assert.deepEqual(assign(s), assign([v('a', 50), v('b', 30), v('c', 20)]))
    assertUniform(assign(s), s)
  })

  it('50/30/20 → 40/40/20 moves 10 %, from a to b only', () => {
    change(start(), [v('a', 40), v('b', 40), v('c', 20)])
  })

  it('50/30/20 → 20/30/50 moves 30 %; b keeps every user although it is between the two', () => {
    change(start(), [v('a', 20), v('b', 30), v('c', 50)])
  })

  it('removing a variant moves only its users', () => {
    change(start(), [v('a', 60), v('c', 40)])
  })

  it('adding a variant in the middle takes users only from the variants that shrink', () => {
    change(start(), [v('a', 40), v('new', 20), v('b', 20), v('c', 20)])
  })

  it('a chain of changes stays minimal and uniform, and returning to the first weights need not restore them', () => {
    let s = start()
    s = change(s, [v('a', 40), v('b', 40), v('c', 20)])
    s = change(s, [v('a', 40), v('new', 20), v('b', 20), v('c', 20)])
    s = change(s, [v('new', 33.33), v('b', 33.33), v('c', 33.34)])
    s = change(s, [v('a', 10), v('new', 30), v('b', 30), v('c', 30)])
    s = change(s, [v('a', 50), v('b', 30), v('c', 20)])
    // Each variant's buckets are several ranges now; each bucket still has exactly one owner.
    const owner = new Array(10_000).fill(0)
    for (const x of s) for (const [b, e] of x.buckets!) for (let k = b; k < e; k++) owner[k]++
    assert.ok(owner.every((n) => n === 1))
  })

  it('unchanged weights move no one; a zero weight owns nothing', () => {
    const s = start()
    assert.deepEqual(assign(reallocate(s, [v('a', 50), v('b', 30), v('c', 20)])), assign(s))
    const z = change(s, [v('a', 50), v('b', 50), v('c', 0)])
    assert.deepEqual(z[2]!.buckets, [])
  })

  it('buckets that do not cover the weights (a hand-edited document) are ignored: the contiguous layout serves', () => {
    const bad = [{ ...v('a', 50), buckets: [[0, 4_000]] as [number, number][] }, { ...v('b', 50), buckets: [[4_000, 10_000]] as [number, number][] }]
    assert.deepEqual(assign(bad), assign([v('a', 50), v('b', 50)]))
    // Sizes right, but overlapping (and leaving 9000-9999 to no one).
    const overlap = [{ ...v('a', 50), buckets: [[0, 5_000]] as [number, number][] }, { ...v('b', 50), buckets: [[4_000, 9_000]] as [number, number][] }]
    assert.deepEqual(assign(overlap), assign([v('a', 50), v('b', 50)]))
    // A valid scattered allocation is used as stored.
    const scattered = [{ ...v('a', 50), buckets: [[5_000, 10_000]] as [number, number][] }, { ...v('b', 50), buckets: [[0, 5_000]] as [number, number][] }]
    assert.deepEqual(assign(scattered), assign([v('b', 50), v('a', 50)]))
  })
})

describe('flags: sticky variants over HTTP', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
  })
  after(async () => {
    await sys?.stop()
  })

  it('stores buckets on write, never shows them, and follows a split when a rule is inserted before it', async () => {
    const base = sys.url.flags
    const s = await post(`${base}/api/v1/signup`, { email: 'sticky@example.com' })
    const key = s.json.api_key
    const P = s.json.project.id
    const flags = `${base}/api/v1/projects/${P}/flags`
    const split = (a: number, b: number, c: number) => [
      { name: 'a', weight: a, value: 'A' },
      { name: 'b', weight: b, value: 'B' },
      { name: 'c', weight: c, value: 'C' },
    ]
    const everyone = { conditions: [], variants: split(50, 30, 20) }
    const created = await post(flags, { key: 'exp', enabled: true, type: 'string', default_value: 'x', rules: [everyone], fallthrough: { variants: split(50, 30, 20) } }, { key })
    assert.equal(created.status, 201, created.text)
    assert.equal(JSON.stringify(created.json).includes('buckets'), false)
    const compiled = async () => compileFlag(definitionOf((await getFlag(sys.platform.db, P, 'exp'))!))
    const users = IDS.slice(0, 20_000)
    const before = await compiled()
    const was = users.map((u) => before.evaluate(u).variant)

    // A rule in front, and the split's weights change 50/30/20 → 40/40/20.
    const put = await call('PUT', `${flags}/exp`, {
      json: { rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 'P' }, { conditions: [], variants: split(40, 40, 20) }] },
      key,
    })
    assert.equal(put.status, 200, put.text)
    assert.equal(JSON.stringify(put.json).includes('buckets'), false)
    assert.deepEqual(put.json.rules[1].variants, split(40, 40, 20))
    assert.equal(JSON.stringify((await get(`${flags}/exp`, { key })).json).includes('buckets'), false)
    const stored = (await getFlag(sys.platform.db, P, 'exp'))!
    assert.deepEqual(stored.rules[1]!.variants!.map((x) => x.buckets!.reduce((n, [b, e]) => n + e - b, 0)), [4_000, 4_000, 2_000])
    const after = await compiled()
    let moved = 0
    for (const [i, u] of users.entries()) {
      const now = after.evaluate(u).variant
      if (now !== was[i]) {
        moved++
        assert.equal(`${was[i]}>${now}`, 'a>b')
      }
    }
    assert.ok(Math.abs(moved / users.length - 0.1) <= 0.01, `${moved} of ${users.length} moved`)

    // What the service serves is what the stored allocation says.
    const ctx = { user_id: 'user-17' }
    const r = await post(`${base}/api/v1/evaluate`, { sdk_key: s.json.sdk_key, flags: ['exp'], context: ctx })
    assert.equal(r.json.flags.exp.variant, after.evaluate(normalizeContext(ctx)).variant)
  })

  it('a split stored before allocations (no buckets) keeps its users, and its first change moves only the required share', async () => {
    const base = sys.url.flags
    const s = await post(`${base}/api/v1/signup`, { email: 'sticky-legacy@example.com' })
    const key = s.json.api_key
    const P = s.json.project.id
    const variants = [v('a', 50), v('b', 30), v('c', 20)]
    assert.equal((await post(`${base}/api/v1/projects/${P}/flags`, { key: 'old', enabled: true, type: 'string', default_value: 'x', fallthrough: { variants } }, { key })).status, 201)
    // As the previous release wrote it: variants without buckets.
    await sys.platform.db.collection('flags').updateOne({ project_id: P, key: 'old' }, { $set: { fallthrough: { variants } } })
    const users = IDS.slice(0, 20_000)
    const legacy = compileFlag(definitionOf((await getFlag(sys.platform.db, P, 'old'))!))
    const was = users.map((u) => legacy.evaluate(u).variant)
    const contiguous = compileSplit('old', { variants }, variants.map((x) => x.name)) // the layout of the previous release
    assert.deepEqual(was, users.map((u) => contiguous(u)))
    const put = await call('PUT', `${base}/api/v1/projects/${P}/flags/old`, { json: { fallthrough: { variants: [v('a', 20), v('b', 30), v('c', 50)] } }, key })
    assert.equal(put.status, 200, put.text)
    const now = compileFlag(definitionOf((await getFlag(sys.platform.db, P, 'old'))!))
    let moved = 0
    for (const [i, u] of users.entries()) {
      const x = now.evaluate(u).variant
      if (x !== was[i]) {
        moved++
        assert.equal(`${was[i]}>${x}`, 'a>c')
      }
    }
    assert.ok(Math.abs(moved / users.length - 0.3) <= 0.01, `${moved} of ${users.length} moved`)
  })
})
