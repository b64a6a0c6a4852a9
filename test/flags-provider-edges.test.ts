// The in-process provider (packages/openfeature-provider) where it once parted from the service:
// generated contexts (up to 130 attributes, prototype names among the keys) and flag keys (known,
// unknown, Object.prototype's names) give the same details in process and over OFREP — the
// context is checked before the flag is looked up on both; flags and variants named "__proto__",
// "constructor" and "prototype" have their usage counted, in process and on the service; and
// resolve*Evaluation answers every bad input with a rejected promise, never a synchronous throw.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ErrorCode, OpenFeature, type Client, type EvaluationContext, type EvaluationDetails, type JsonValue } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { QueueworksProvider } from '../packages/openfeature-provider/src/index.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { until } from './helpers/wait.ts'

type Kind = 'boolean' | 'string' | 'number' | 'object'

const FLAGS: (Record<string, unknown> & { key: string; type: Kind })[] = [
  { key: 'checkout', type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }], value: true }] },
  {
    key: 'layout',
    type: 'string',
    enabled: true,
    default_value: 'a',
    rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 'pro' }],
    fallthrough: { variants: [{ name: 'wide', weight: 50, value: 'wide' }, { name: 'narrow', weight: 50, value: 'narrow' }] },
  },
  { key: 'price', type: 'number', enabled: false, default_value: 10, rules: [] },
  // Rules on a date, a number and a date's text: Dates and boxed values in a context count as their JSON.
  { key: 'launch', type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [{ attribute: 'created', operator: 'before', value: '2025-01-01T00:00:00Z' }], value: true }] },
  {
    key: 'quota',
    type: 'number',
    enabled: true,
    default_value: 0,
    rules: [
      { conditions: [{ attribute: 'seats', operator: 'gt', value: 10 }], value: 1 },
      { conditions: [{ attribute: 'created', operator: 'eq', value: '2024-06-01T00:00:00.000Z' }], value: 2 },
    ],
  },
  { key: 'limits', type: 'object', enabled: true, default_value: { max: 3 }, rules: [{ conditions: [{ attribute: 'targetingKey', operator: 'percent', value: 50 }], value: { max: 10 } }] },
  // Names of Object.prototype's members: flags (and variants) like any other.
  { key: '__proto__', type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], value: true }] },
  {
    key: 'constructor',
    type: 'string',
    enabled: true,
    default_value: 'x',
    rules: [],
    fallthrough: { variants: [{ name: '__proto__', weight: 50, value: 'p' }, { name: 'constructor', weight: 50, value: 'c' }] },
  },
  { key: 'prototype', type: 'number', enabled: true, default_value: 1, rules: [] },
]
const KNOWN = FLAGS.map((f) => f.key)
const UNKNOWN = ['no-such-flag', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf']
const DEFAULTS: Record<Kind, JsonValue> = { boolean: true, string: 'dflt', number: -1, object: { d: 1 } }

/** Context keys: the ones the flags read, prototype names, and anything. */
const attrKey = fc.oneof(
  fc.constantFrom('targetingKey', 'country', 'plan', 'created', 'seats', '__proto__', 'constructor', 'prototype', 'toString', 'valueOf'),
  fc.string({ maxLength: 8 }),
)
const attrValue = fc.oneof(
  fc.constantFrom('DE', 'AT', 'FR', 'pro', 'free'),
  fc.string({ maxLength: 10 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
  // What JSON writes otherwise than JavaScript holds it (OFREP sees the JSON): Dates (valid or
  // not), boxed primitives, objects with a toJSON, and values JSON leaves out or writes as null.
  fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: false }),
  fc.constantFrom(new Date('2024-06-01T00:00:00Z'), new Date(NaN), new Number(11), new Number(5), new String('DE'), new Boolean(true)),
  fc.constantFrom({ toJSON: () => 'DE' }, { toJSON: () => 42 }, { toJSON: () => undefined }),
  fc.constantFrom(undefined, NaN, Infinity, -0, 1e21, () => 'DE'),
)
/** Small contexts, and large ones around the limit of 100 attributes (95–130), attributes JSON leaves out among them. */
const contextArb = fc.oneof(
  fc.dictionary(attrKey, attrValue, { maxKeys: 8 }),
  fc.dictionary(fc.oneof(attrKey, fc.string({ minLength: 1, maxLength: 6 })), attrValue, { minKeys: 95, maxKeys: 130 }),
)
/** Known flags, unknown ones (Object.prototype's names among them), and generated keys the API would accept. */
const flagKeyArb = fc.oneof(fc.constantFrom(...KNOWN), fc.constantFrom(...UNKNOWN), fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,20}$/))

const details = (c: Client, kind: Kind, key: string, ctx: EvaluationContext): Promise<EvaluationDetails<JsonValue>> =>
  kind === 'boolean'
    ? c.getBooleanDetails(key, DEFAULTS.boolean as boolean, ctx)
    : kind === 'string'
      ? c.getStringDetails(key, DEFAULTS.string as string, ctx)
      : kind === 'number'
        ? c.getNumberDetails(key, DEFAULTS.number as number, ctx)
        : c.getObjectDetails(key, DEFAULTS.object, ctx)
const strip = (d: EvaluationDetails<JsonValue>) => ({ value: d.value, reason: d.reason, variant: d.variant, errorCode: d.errorCode, flagMetadata: d.flagMetadata })

describe('flags: in-process provider — OFREP\'s check order, prototype names, rejected promises', function () {
  this.timeout(90_000)
  let sys: TestSystem
  let t: FlagsAccount
  let serverKey: string
  let local: Client
  let remote: Client

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false, env: { FLAGS_USAGE_FLUSH_MS: '200' } })
    t = await flagsAccount(sys, 'business')
    for (const f of FLAGS) {
      const r = await post(`${t.project}/flags`, f, { key: t.apiKey })
      assert.equal(r.status, 201, r.text)
    }
    serverKey = (await post(`${t.project}/environments/production/server-key/rotate`, undefined, { key: t.apiKey })).json.server_key
    await OpenFeature.setProviderAndWait('edges-local', new QueueworksProvider({ url: sys.url.flags, serverKey, usage: false }))
    local = OpenFeature.getClient('edges-local')
    await OpenFeature.setProviderAndWait('edges-remote', new OFREPProvider({ baseUrl: sys.url.flags, headers: [['Authorization', `Bearer ${t.sdkKey}`]] }))
    remote = OpenFeature.getClient('edges-remote')
  })
  after(async () => {
    await OpenFeature.close()
    await sys?.stop()
  })

  it('generated (flag, context) pairs, contexts of up to 130 attributes included: the same details in process as over OFREP', async () => {
    const seen = { pairs: 0, unknownTooMany: 0, tooMany: 0, found: 0 }
    await fc.assert(
      fc.asyncProperty(flagKeyArb, contextArb, fc.constantFrom<Kind>('boolean', 'string', 'number', 'object'), fc.boolean(), async (key, generated, asked, sameType) => {
        // The same object to both: the OFREP provider sends it as JSON, the in-process one reads it.
        const ctx = generated as EvaluationContext
        const kind = sameType ? (FLAGS.find((f) => f.key === key)?.type ?? asked) : asked
        const [a, b] = await Promise.all([details(local, kind, key, ctx), details(remote, kind, key, ctx)])
        assert.deepEqual(strip(a), strip(b), `flag ${JSON.stringify(key)} as ${kind}, ${Object.keys(ctx).length} attributes`)
        seen.pairs++
        if (a.errorCode === ErrorCode.INVALID_CONTEXT) {
          seen.tooMany++
          if (!KNOWN.includes(key)) seen.unknownTooMany++
        }
        if (!a.errorCode) seen.found++
      }),
      { numRuns: 400 },
    )
    // The runs met the case that once differed, and plain answers too.
    assert.equal(seen.pairs, 400)
    assert.ok(seen.unknownTooMany >= 20, JSON.stringify(seen))
    assert.ok(seen.found >= 20, JSON.stringify(seen))
  })

  it('an unknown flag with 101 attributes is INVALID_CONTEXT in process, as on OFREP; with 100, FLAG_NOT_FOUND on both', async () => {
    const ctx = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`a${i}`, i]))
    for (const [n, code] of [[101, ErrorCode.INVALID_CONTEXT], [100, ErrorCode.FLAG_NOT_FOUND]] as const) {
      const a = await local.getBooleanDetails('no-such-flag', false, ctx(n))
      const b = await remote.getBooleanDetails('no-such-flag', false, ctx(n))
      assert.equal(a.errorCode, code)
      assert.deepEqual(strip(a), strip(b))
    }
  })

  it('a Date attribute counts as its ISO string, a boxed number as the number, and an undefined attribute not at all — as their JSON on OFREP', async () => {
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`a${i}`, i]))
    const cases: [Kind, string, EvaluationContext, JsonValue, string | undefined][] = [
      ['boolean', 'launch', { created: new Date('2020-01-01T00:00:00Z') }, true, undefined],
      ['boolean', 'launch', { created: new Date('2026-01-01T00:00:00Z') }, false, undefined],
      ['boolean', 'launch', { created: new Date(NaN) }, false, undefined],
      ['number', 'quota', { seats: new Number(11) as unknown as number }, 1, undefined],
      ['number', 'quota', { created: new Date('2024-06-01T00:00:00Z') }, 2, undefined],
      ['boolean', 'checkout', { country: new String('DE') as unknown as string }, true, undefined],
      // 100 attributes and one JSON leaves out: 100 on both sides, so the flag is looked up.
      ['boolean', 'no-such-flag', { ...hundred, extra: undefined as unknown as string }, DEFAULTS.boolean, ErrorCode.FLAG_NOT_FOUND],
      ['boolean', 'no-such-flag', { ...hundred, extra: new Date(0) }, DEFAULTS.boolean, ErrorCode.INVALID_CONTEXT],
    ]
    for (const [kind, key, ctx, value, errorCode] of cases) {
      const [a, b] = await Promise.all([details(local, kind, key, ctx), details(remote, kind, key, ctx)])
      assert.deepEqual(strip(a), strip(b), `${key} ${JSON.stringify(ctx).slice(0, 80)}`)
      assert.deepEqual([a.value, a.errorCode], [value, errorCode], `${key} ${JSON.stringify(ctx).slice(0, 80)}`)
    }
  })

  it('flags and variants named __proto__, constructor and prototype: usage counted in process and on the service', async () => {
    // A project of its own: the other tests' OFREP calls are counted too.
    const u = await flagsAccount(sys, 'business')
    for (const f of FLAGS.filter((f) => ['__proto__', 'constructor', 'prototype'].includes(f.key))) assert.equal((await post(`${u.project}/flags`, f, { key: u.apiKey })).status, 201)
    const key = (await post(`${u.project}/environments/production/server-key/rotate`, undefined, { key: u.apiKey })).json.server_key
    const provider = new QueueworksProvider({ url: sys.url.flags, serverKey: key, usage: { flushIntervalMs: 600_000 } })
    await OpenFeature.setProviderAndWait('edges-usage', provider)
    const client = OpenFeature.getClient('edges-usage')
    const variants: Record<string, number> = Object.create(null)
    for (let i = 0; i < 7; i++) assert.equal(await client.getBooleanValue('__proto__', false, { country: i < 3 ? 'DE' : 'FR' }), i < 3)
    for (let i = 0; i < 12; i++) {
      const d = await client.getStringDetails('constructor', '', { targetingKey: `user-${i}` })
      assert.equal(d.errorCode, undefined)
      variants[d.variant!] = (variants[d.variant!] ?? 0) + 1
    }
    for (let i = 0; i < 5; i++) assert.equal(await client.getNumberValue('prototype', 0, {}), 1)
    assert.deepEqual(Object.keys(variants).sort(), ['__proto__', 'constructor'], 'both variants served')
    // The service's own evaluations of the same flag.
    for (let i = 0; i < 2; i++) assert.equal((await post(`${sys.url.flags}/ofrep/v1/evaluate/flags/__proto__`, { context: { country: 'DE' } }, { key: u.sdkKey })).status, 200)
    await provider.onClose()

    const usage = async (flag: string, inProcess: number, service = 0) =>
      until(`the usage of ${flag}`, async () => {
        const r = await get(`${u.project}/flags/${flag}/usage`, { key: u.apiKey })
        assert.equal(r.status, 200, r.text)
        return r.json.totals.in_process === inProcess && r.json.totals.service === service ? r.json.totals : undefined
      })
    assert.deepEqual(await usage('__proto__', 7, 2), {
      service: 2,
      in_process: 7,
      variants: { 'rule-0': { service: 2, in_process: 3 }, default: { service: 0, in_process: 4 } },
    })
    const c = await usage('constructor', 12)
    // JSON.parse makes "__proto__" an own key: the answer's variants are exactly the two served.
    assert.deepEqual(Object.keys(c.variants).sort(), ['__proto__', 'constructor'])
    assert.equal(c.variants.__proto__.in_process, variants.__proto__)
    assert.equal(c.variants.constructor.in_process, variants.constructor)
    assert.deepEqual(await usage('prototype', 5), { service: 0, in_process: 5, variants: { default: { service: 0, in_process: 5 } } })
    // Reading them changed nothing shared (the service runs in this process).
    assert.equal(({} as Record<string, unknown>).in_process, undefined)
    assert.equal(({} as Record<string, unknown>).service, undefined)
  })

  it('a batch naming __proto__ as flag or variant is taken (202), and refusals still name the field', async () => {
    const report = (raw: string) => call('POST', `${sys.url.flags}/api/v1/flag-usage`, { raw, key: serverKey })
    const r = await report('{"flags":{"__proto__":{"rule-0":2,"__proto__":1},"constructor":{"__proto__":1}}}')
    assert.equal(r.status, 202, r.text)
    assert.deepEqual(r.json, { accepted: 3, ignored_flags: [], ignored_variants: ['__proto__/__proto__'] })
    const bad = await report('{"flags":{"__proto__":{"rule-0":-1}}}')
    assert.equal(bad.status, 400, bad.text)
    assert.equal(bad.json.error, 'flags.__proto__.rule-0 must be >= 0')
    const notObject = await report('{"flags":{"__proto__":3}}')
    assert.equal(notObject.status, 400, notObject.text)
    assert.equal(notObject.json.error, 'flags.__proto__ must be an object')
    const missing = await report('{}')
    assert.equal(missing.json.error, 'flags is required')
    const plain = await call('POST', `${sys.url.flags}/api/v1/flag-usage`, { raw: '{"flags":{}}', key: serverKey, headers: { 'content-type': 'text/plain' } })
    assert.equal(plain.status, 415, plain.text)
    assert.equal(plain.json.error, 'Content-Type must be application/json')
  })

  it('resolve*Evaluation answers bad input with a rejected promise (the OpenFeature error), never a synchronous throw', async () => {
    const provider = new QueueworksProvider({ url: sys.url.flags, serverKey, usage: false, stream: false })
    const big = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`a${i}`, i]))
    const throwing = { get country(): string {
      throw new Error('a getter that throws')
    } } as unknown as EvaluationContext
    // Before a flag set is loaded.
    const early = provider.resolveBooleanEvaluation('checkout', false, {})
    await assert.rejects(early, { code: ErrorCode.PROVIDER_NOT_READY })
    await provider.initialize()
    try {
      const cases: [() => Promise<unknown>, RegExp | { code: ErrorCode }][] = [
        [() => provider.resolveBooleanEvaluation('no-such-flag', false, {}), { code: ErrorCode.FLAG_NOT_FOUND }],
        [() => provider.resolveStringEvaluation('no-such-flag', '', big), { code: ErrorCode.INVALID_CONTEXT }],
        [() => provider.resolveNumberEvaluation('checkout', 0, {}), { code: ErrorCode.TYPE_MISMATCH }],
        [() => provider.resolveObjectEvaluation('checkout', {}, 'DE' as unknown as EvaluationContext), { code: ErrorCode.INVALID_CONTEXT }],
        [() => provider.resolveObjectEvaluation('checkout', {}, ['DE'] as unknown as EvaluationContext), { code: ErrorCode.INVALID_CONTEXT }],
        [() => provider.resolveBooleanEvaluation(undefined as unknown as string, false, {}), { code: ErrorCode.FLAG_NOT_FOUND }],
        [() => provider.resolveBooleanEvaluation('checkout', false, throwing), /a getter that throws/],
      ]
      for (const [run, expected] of cases) {
        let p: Promise<unknown> | undefined
        assert.doesNotThrow(() => (p = run()), String(run))
        assert.ok(p instanceof Promise, String(run))
        if (expected instanceof RegExp) await assert.rejects(p!, expected)
        else await assert.rejects(p!, (err: { code?: unknown }) => (assert.equal(err.code, expected.code, String(run)), true))
      }
      // And a good input still resolves.
      assert.equal((await provider.resolveBooleanEvaluation('checkout', false, { country: 'DE' })).value, true)
    } finally {
      await provider.onClose()
    }
  })
})
