// Identical answers in process and on the service: 200 random flags (every operator, with
// case_insensitive and negate, every value type, segments, variant splits on rules and
// fallthroughs with and without stickiness, percent rollouts, disabled flags) evaluated for 500
// random contexts — 100,000 (flag, context) pairs — by the OFREP bulk endpoint (one call per
// context) and by the in-process provider through the OpenFeature server SDK: 0 differences in
// value, reason, variant, metadata or error. Then Unleash's client-specification vectors through
// the provider. The generator is seeded (the seed is in the failure message) so a difference can
// be replayed with QW_CONFORMANCE_SEED.
import assert from 'node:assert/strict'
import { OpenFeature, type Client, type EvaluationContext, type EvaluationDetails, type JsonValue } from '@openfeature/server-sdk'
import { QueueworksProvider } from '../packages/openfeature-provider/src/index.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { contextOf, NOT_EXPRESSIBLE, SPEC_FILES, specFile, translateFeature } from './helpers/unleash-spec.ts'

const SEED = Number(process.env.QW_CONFORMANCE_SEED ?? Math.floor(Math.random() * 2 ** 31))
const FLAGS = 200
const CONTEXTS = 500

/** mulberry32: small, seeded, good enough to spread cases. */
function prng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!
  const chance = (p: number) => next() < p
  return { next, int, pick, chance }
}

// Small pools, so that conditions and contexts meet often enough for every branch to be taken.
const COUNTRIES = ['DE', 'de', 'AT', 'FR', 'US', 'GB', 'Ch']
const EMAILS = ['ann@example.com', 'BOB@Example.com', 'qa-1@corp.example', 'eve@beta.example', 'x@y.z', '']
const PLANS = ['free', 'starter', 'pro', 'business', 'PRO']
const VERSIONS = ['1.0.0', '1.2.3', '2.0.0', '2.0.0-beta.1', '10.1.0', 'v1.0.0', 'junk', '3.4.5+build']
const IPS = ['10.0.0.1', '10.1.2.3', '192.168.1.20', '172.16.5.4', '::ffff:10.0.0.9', '2001:db8::1', 'not-an-ip']
const DATES = ['2020-01-01T00:00:00Z', '2024-06-30T12:00:00+02:00', '2030-12-31T23:59:59.5Z', 'yesterday', '2026-01-01T00:00:00Z']
const NUMBERS = ['0', '5', '17', '17.5', '100', '-3', '1e3', 'abc', '']

type R = ReturnType<typeof prng>

function randomCondition(r: R): Record<string, unknown> {
  const opts = { ...(r.chance(0.2) ? { case_insensitive: true } : {}), ...(r.chance(0.15) ? { negate: true } : {}) }
  const kind = r.int(12)
  switch (kind) {
    case 0:
      return { attribute: 'country', operator: r.pick(['eq', 'neq'] as const), value: r.pick(COUNTRIES), ...opts }
    case 1:
      return { attribute: 'email', operator: r.pick(['contains', 'not_contains', 'starts_with', 'ends_with'] as const), value: r.chance(0.5) ? r.pick(['@example.com', 'qa-', 'beta', 'BOB']) : ['@corp.example', 'eve'], ...opts }
    case 2:
      return { attribute: r.pick(['country', 'plan']), operator: r.pick(['in', 'not_in'] as const), value: [r.pick(COUNTRIES), r.pick(PLANS), r.pick(COUNTRIES)], ...opts }
    case 3:
      return { attribute: 'email', operator: 'matches', value: r.pick(['^qa-', '@(example|corp)\\.', '^[a-z]+@beta\\.example$', 'bob', '^x@']), ...opts }
    case 4:
      return { attribute: r.pick(['age', 'score']), operator: r.pick(['gt', 'gte', 'lt', 'lte', 'num_eq'] as const), value: r.pick([0, 5, 17, 17.5, 100, -3]), ...opts }
    case 5:
      return { attribute: 'version', operator: r.pick(['semver_eq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte'] as const), value: r.pick(['1.2.3', '2.0.0', '2.0.0-beta.1', '3.0.0']), ...opts }
    case 6:
      return { attribute: r.pick(['created', 'now']), operator: r.pick(['before', 'after'] as const), value: r.pick(['2022-01-01T00:00:00Z', '2025-06-01T00:00:00+01:00', '2040-01-01T00:00:00Z']), ...opts }
    case 7:
      return { attribute: 'ip', operator: 'in_cidr', value: r.chance(0.5) ? r.pick(['10.0.0.0/8', '192.168.1.0/24', '2001:db8::/32']) : ['172.16.0.0/12', '10.0.0.1'], ...opts }
    case 8:
      return { attribute: r.pick(['targetingKey', 'user_id', 'email']), operator: 'percent', value: r.pick([0, 10, 25, 33.33, 50, 75, 99.99, 100]), ...opts }
    case 9:
      return { attribute: 'beta', operator: 'eq', value: r.pick(['true', 'false']), ...opts }
    case 10: {
      const op = r.pick(['not_in', 'not_contains', 'eq'] as const)
      return { attribute: 'missing_attr', operator: op, value: op === 'not_in' ? ['a'] : 'a', ...opts }
    }
    default:
      return { attribute: 'plan', operator: r.pick(['eq', 'neq', 'starts_with'] as const), value: r.pick(PLANS), ...opts }
  }
}

const TYPES = [undefined, 'boolean', 'string', 'number', 'object'] as const
function valueOf(r: R, type: (typeof TYPES)[number], i: number): unknown {
  switch (type) {
    case undefined:
      return r.pick(['true', 'false', `v${i}`, 'on'])
    case 'boolean':
      return r.chance(0.5)
    case 'string':
      return r.pick(['red', 'green', 'blue', `s${i}`])
    case 'number':
      return r.pick([0, 1, 2.5, -7, 1000, i])
    case 'object':
      return r.pick([{ a: 1 }, { list: [1, 2] }, [], { nested: { x: i } }])
  }
}

function split(r: R, type: (typeof TYPES)[number]) {
  const n = 2 + r.int(3)
  const weights = Array.from({ length: n }, () => 1 + r.int(50))
  const total = weights.reduce((a, b) => a + b, 0)
  // Integer percents that sum to 100 (the last takes the rounding).
  const pct = weights.map((w) => Math.floor((w * 100) / total))
  pct[n - 1]! += 100 - pct.reduce((a, b) => a + b, 0)
  const variants = pct.map((weight, j) => ({ name: `var-${j}`, weight, value: valueOf(r, type, j) }))
  return { variants, ...(r.chance(0.4) ? { stickiness: r.pick(['user_id', 'email', 'country']) } : {}) }
}

export function randomFlag(r: R, i: number): Record<string, unknown> {
  const type = TYPES[i % TYPES.length]
  const rules = Array.from({ length: r.int(5) }, () => {
    const conditions = Array.from({ length: r.int(4) }, () => randomCondition(r))
    const segments = r.chance(0.25) ? [r.pick(['staff', 'eu', 'modern'])] : undefined
    const base = { conditions, ...(segments ? { segments } : {}) }
    return r.chance(0.3) ? { ...base, ...split(r, type) } : { ...base, value: valueOf(r, type, i) }
  })
  const def: Record<string, unknown> = { key: `f-${String(i).padStart(3, '0')}`, enabled: r.chance(0.9), rules }
  if (type !== undefined) def.type = type
  // A boolean flag may take its implicit default; others name one.
  if (type !== 'boolean' || r.chance(0.5)) def.default_value = valueOf(r, type, i)
  if (r.chance(0.25)) def.fallthrough = split(r, type)
  return def
}

function randomContext(r: R, i: number): EvaluationContext {
  const c: EvaluationContext = {}
  const maybe = (p: number, k: string, v: () => EvaluationContext[string]) => {
    if (r.chance(p)) c[k] = v()
  }
  maybe(0.8, 'targetingKey', () => `user-${r.int(2000)}`)
  maybe(0.5, 'user_id', () => (r.chance(0.8) ? `uid-${r.int(500)}` : r.int(1000)))
  maybe(0.7, 'country', () => r.pick(COUNTRIES))
  maybe(0.7, 'email', () => r.pick(EMAILS))
  maybe(0.6, 'plan', () => r.pick(PLANS))
  maybe(0.6, 'version', () => r.pick(VERSIONS))
  maybe(0.5, 'ip', () => r.pick(IPS))
  maybe(0.5, 'created', () => r.pick(DATES))
  maybe(0.2, 'now', () => r.pick(DATES))
  maybe(0.5, 'age', () => (r.chance(0.5) ? Number(r.pick(NUMBERS.filter((n) => n !== '' && n !== 'abc'))) : r.pick(NUMBERS)))
  maybe(0.3, 'score', () => r.next() * 200 - 50)
  maybe(0.4, 'beta', () => r.chance(0.5))
  maybe(0.1, 'nested', () => ({ a: i }))
  return c
}

describe('flags: the in-process provider answers as the service (conformance)', function () {
  this.timeout(60_000)
  let sys: TestSystem
  let base: string

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
  })
  after(async () => {
    await OpenFeature.close()
    await sys?.stop()
  })

  async function providerFor(acc: FlagsAccount, domain: string): Promise<Client> {
    const k = await post(`${acc.project}/environments/production/server-key/rotate`, undefined, { key: acc.apiKey })
    assert.equal(k.status, 200, k.text)
    await OpenFeature.setProviderAndWait(domain, new QueueworksProvider({ url: base, serverKey: k.json.server_key, usage: false }))
    return OpenFeature.getClient(domain)
  }

  it(`${FLAGS * CONTEXTS} random (flag, context) pairs: 0 differences between OFREP and the provider`, async () => {
    const r = prng(SEED)
    const acc = await flagsAccount(sys, 'business')
    const segments = [
      { name: 'staff', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@example.com', case_insensitive: true }] },
      { name: 'eu', conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT', 'FR'] }] },
      { name: 'modern', conditions: [{ attribute: 'version', operator: 'semver_gte', value: '2.0.0' }, { attribute: 'targetingKey', operator: 'percent', value: 50 }] },
    ]
    for (const s of segments) assert.equal((await post(`${acc.project}/segments`, s, { key: acc.apiKey })).status, 201)
    const defs = Array.from({ length: FLAGS }, (_, i) => randomFlag(r, i))
    for (let i = 0; i < defs.length; i += 20) {
      const answers = await Promise.all(defs.slice(i, i + 20).map((d) => post(`${acc.project}/flags`, d, { key: acc.apiKey })))
      for (const [j, a] of answers.entries()) assert.equal(a.status, 201, `seed ${SEED}, ${JSON.stringify(defs[i + j])}: ${a.text}`)
    }
    const client = await providerFor(acc, 'conformance')
    const contexts = Array.from({ length: CONTEXTS }, (_, i) => randomContext(r, i))

    const differences: string[] = []
    const seen = { reasons: new Set<string>(), variants: 0, errors: 0, types: new Set<string>() }
    let pairs = 0
    // A few contexts in flight: the service answers one while the provider evaluates another.
    const one = async (ctx: EvaluationContext) => {
      const res = await post(`${base}/ofrep/v1/evaluate/flags`, { context: ctx }, { key: acc.sdkKey })
      assert.equal(res.status, 200, res.text)
      const remote = res.json.flags as { key: string; value: JsonValue; reason: string; variant: string; metadata: Record<string, unknown> }[]
      assert.equal(remote.length, FLAGS)
      for (const want of remote) {
        // Asked for the type the service answered (a different type is a TYPE_MISMATCH on both sides).
        const t = Array.isArray(want.value) || want.value === null ? 'object' : typeof want.value
        const fallback = t === 'boolean' ? false : t === 'number' ? -1 : t === 'string' ? '' : {}
        const got: EvaluationDetails<JsonValue> =
          t === 'boolean' ? await client.getBooleanDetails(want.key, false, ctx)
          : t === 'number' ? await client.getNumberDetails(want.key, -1, ctx)
          : t === 'string' ? await client.getStringDetails(want.key, '', ctx)
          : await client.getObjectDetails(want.key, fallback as JsonValue, ctx)
        pairs++
        seen.reasons.add(want.reason)
        seen.types.add(t)
        if (want.variant.startsWith('var-')) seen.variants++
        if (got.errorCode) seen.errors++
        const a = { value: got.value, reason: got.reason, variant: got.variant, metadata: got.flagMetadata, error: got.errorCode }
        const b = { value: want.value, reason: want.reason, variant: want.variant, metadata: want.metadata, error: undefined }
        try {
          assert.deepEqual(a, b)
        } catch {
          if (differences.length < 5) differences.push(`${want.key} ${JSON.stringify(ctx)}: provider ${JSON.stringify(a)} ≠ service ${JSON.stringify(b)}`)
          else differences.push('')
        }
      }
    }
    for (let i = 0; i < contexts.length; i += 4) await Promise.all(contexts.slice(i, i + 4).map(one))
    assert.equal(pairs, FLAGS * CONTEXTS)
    assert.equal(differences.length, 0, `seed ${SEED}: ${differences.length} differences, first: ${differences.filter(Boolean).join('\n')}`)
    // The generator reached every kind of answer (else 0 differences would prove little).
    assert.deepEqual([...seen.reasons].sort(), ['DEFAULT', 'DISABLED', 'TARGETING_MATCH'])
    assert.deepEqual([...seen.types].sort(), ['boolean', 'number', 'object', 'string'])
    assert.ok(seen.variants > 1_000, `variants served: ${seen.variants}`)
    assert.equal(seen.errors, 0)
  })

  it("Unleash's client-specification vectors through the provider", async () => {
    const acc = await flagsAccount(sys, 'business')
    let checked = 0
    for (const file of SPEC_FILES) {
      const tag = file.slice(0, 2)
      const spec = specFile(file)
      // One project per file: toggle names repeat across files.
      const p = await post(`${acc.project.replace(/\/projects\/.*$/, '/projects')}`, { name: `unleash ${tag}` }, { key: acc.apiKey })
      assert.equal(p.status, 201, p.text)
      const project = { ...acc, projectId: p.json.id, sdkKey: p.json.sdk_key, project: `${base}/api/v1/projects/${p.json.id}` }
      for (const f of spec.state.features) {
        if (NOT_EXPRESSIBLE[`${tag}/${f.name}`]) continue
        const r = await post(`${project.project}/flags`, translateFeature(f), { key: acc.apiKey })
        assert.equal(r.status, 201, `${tag}/${f.name}: ${r.text}`)
      }
      const client = await providerFor(project, `unleash-${tag}`)
      for (const t of spec.tests) {
        if (NOT_EXPRESSIBLE[`${tag}/${t.toggleName}`]) continue
        // Unleash answers false for a toggle it does not know; the provider answers the default (false) with FLAG_NOT_FOUND.
        const got = await client.getBooleanValue(t.toggleName, false, contextOf(t) as EvaluationContext)
        assert.equal(got, t.expectedResult, `${tag}: ${t.description} (context ${JSON.stringify(contextOf(t))})`)
        checked++
      }
    }
    assert.ok(checked > 100, `cases checked: ${checked}`)
  })
})
