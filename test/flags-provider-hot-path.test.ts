// What the in-process provider's hot path relies on (docs/flags-evaluation.md, "The evaluation hot path"):
// every result a compiled flag can serve is listed at its slot (the provider keeps a result's
// details and usage count by slot); contexts are read in place only when that gives the answers
// of a copy of their own attributes (a prototype decides, never an own property named
// `__proto__`); and the provider answers as the OFREP endpoint for such contexts and for every
// pair of flag type and default type.
import assert from 'node:assert/strict'
import { OpenFeature, type Client, type EvaluationContext, type JsonValue } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { QueueworksProvider } from '../packages/openfeature-provider/src/index.ts'
import { compileFlag, inPlaceContext, normalizeContext, NOT_FOUND, type FlagDefinition } from '../src/flags/engine/rules.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { post } from './helpers/http.ts'
import { flagsAccount } from './helpers/flags.ts'

const split = (names: string[]) => names.map((name, i) => ({ name, weight: i === 0 ? 100 - 10 * (names.length - 1) : 10, value: name }))

const FLAGS: FlagDefinition[] = [
  {
    key: 'every-kind',
    enabled: true,
    type: 'string',
    default_value: 'plain',
    rules: [
      { conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 'pro' },
      { conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }], variants: split(['de-a', 'de-b', 'de-c']) },
      { conditions: [{ attribute: 'country', operator: 'eq', value: 'FR' }], value: 'fr' },
      { conditions: [{ attribute: 'age', operator: 'gte', value: 18 }], variants: split(['adult-a', 'adult-b']) },
    ],
    fallthrough: { variants: split(['rest-a', 'rest-b']) },
  },
  { key: 'no-rules', enabled: true, type: 'number', default_value: 3, rules: [] },
  { key: 'off', enabled: false, type: 'boolean', default_value: true, rules: [{ conditions: [], value: true }] },
]

/** A class whose prototype holds a scalar attribute: a copy of the instance's own attributes does not have it. */
class Visitor {
  constructor(readonly user_id: string) {}
  get country() {
    return 'DE'
  }
}

describe('flags: the in-process hot path (results by slot, contexts read in place)', () => {
  it('lists every result a flag serves at its slot, which answers, JSON and comparisons leave out', () => {
    const f = compileFlag(FLAGS[0]!)
    // 1 (pro) + 3 (DE/AT split) + 1 (fr) + 2 (adult split) + 2 (fallthrough split).
    assert.equal(f.results.length, 9)
    f.results.forEach((r, i) => assert.equal(r.slot, i))
    const seen = new Set<number>()
    const contexts = [{ plan: 'pro' }, { country: 'FR' }, ...Array.from({ length: 400 }, (_, i) => ({ user_id: `u${i}`, country: ['DE', 'AT', 'US'][i % 3], age: i % 40 }))]
    for (const c of contexts) {
      const r = f.evaluate(normalizeContext(c))
      assert.equal(f.results[r.slot], r, JSON.stringify(c))
      seen.add(r.slot)
    }
    assert.equal(seen.size, 9, 'the contexts reach every result')
    const r = f.evaluate(normalizeContext({ plan: 'pro' }))
    assert.deepEqual(Object.keys(r), ['value', 'reason', 'rule_index'])
    assert.equal(JSON.stringify(r), '{"value":"pro","reason":"TARGETING_MATCH","rule_index":0}')
    assert.deepEqual({ ...r }, { value: 'pro', reason: 'TARGETING_MATCH', rule_index: 0 })
    assert.ok(Object.isFrozen(r))
    const off = compileFlag(FLAGS[2]!)
    assert.equal(off.results.length, 1)
    assert.equal(off.evaluate(normalizeContext({})), off.results[0])
    assert.equal(compileFlag(FLAGS[1]!).results.length, 1)
    assert.equal(NOT_FOUND.slot, -1)
  })

  it('reads plain and prototype-less objects in place; copies anything whose prototype could add attributes', () => {
    for (const plain of [{ a: 1 }, Object.assign(Object.create(null), { a: 1 }), normalizeContext({ a: 1 }), JSON.parse('{"__proto__": null, "a": 1}'), JSON.parse('{"__proto__": "x"}')]) {
      const read = inPlaceContext(plain)
      // An own "__proto__" attribute hides the prototype from a read of `__proto__`: in place or
      // copied, the answers are the copy's (checked below); a plain one is never worse than copied.
      if (!Object.hasOwn(plain, '__proto__')) assert.equal(read, plain, JSON.stringify(plain))
    }
    const visitor = new Visitor('u1')
    assert.notEqual(inPlaceContext(visitor as unknown as Record<string, unknown>), visitor)
    // An own property named __proto__ that reads as Object.prototype must not pass for the prototype.
    const disguised = new Visitor('u2')
    Object.defineProperty(disguised, '__proto__', { value: Object.prototype, enumerable: false })
    assert.equal((disguised as unknown as { __proto__: unknown }).__proto__, Object.prototype)
    assert.notEqual(inPlaceContext(disguised as unknown as Record<string, unknown>), disguised)
    // The answers: those of a copy of the object's own attributes, in place or not.
    const f = compileFlag(FLAGS[0]!)
    for (const c of [visitor, disguised, JSON.parse('{"__proto__": null, "country": "FR"}'), JSON.parse('{"__proto__": "DE", "country": "FR"}')]) {
      const raw = c as unknown as Record<string, unknown>
      assert.equal(f.evaluate(inPlaceContext(raw)), f.evaluate(normalizeContext(raw)), JSON.stringify(c))
    }
    assert.equal(f.evaluate(inPlaceContext(visitor as unknown as Record<string, unknown>)).reason, 'DEFAULT', 'the inherited country is not an attribute')
  })

  describe('the provider against the OFREP endpoint', () => {
    let sys: TestSystem
    let provider: QueueworksProvider
    let remote: Client

    before(async () => {
      sys = await startSystem({ services: ['flags'], workers: false })
      const t = await flagsAccount(sys, 'business')
      for (const f of FLAGS) {
        const r = await post(`${t.project}/flags`, f, { key: t.apiKey })
        assert.equal(r.status, 201, r.text)
      }
      const serverKey = (await post(`${t.project}/environments/production/server-key/rotate`, undefined, { key: t.apiKey })).json.server_key
      provider = new QueueworksProvider({ url: sys.url.flags, serverKey, usage: false })
      await OpenFeature.setProviderAndWait('hot-path-local', provider)
      await OpenFeature.setProviderAndWait('hot-path-remote', new OFREPProvider({ baseUrl: sys.url.flags, headers: [['Authorization', `Bearer ${t.sdkKey}`]] }))
      remote = OpenFeature.getClient('hot-path-remote')
    })
    after(async () => {
      await OpenFeature.close()
      await sys?.stop()
    })

    /** The provider's answer as the SDK would report it: details, or the error's code. */
    const local = (key: string, dflt: JsonValue, ctx: EvaluationContext) => {
      try {
        const d = provider.resolve(key, dflt, ctx)
        return { value: d.value, reason: d.reason, variant: d.variant, flagMetadata: d.flagMetadata, errorCode: undefined }
      } catch (err) {
        return { value: dflt, reason: 'ERROR', variant: undefined, flagMetadata: {}, errorCode: (err as { code?: string }).code }
      }
    }
    const ofrep = async (key: string, dflt: JsonValue, ctx: EvaluationContext) => {
      const d =
        typeof dflt === 'boolean'
          ? await remote.getBooleanDetails(key, dflt, ctx)
          : typeof dflt === 'string'
            ? await remote.getStringDetails(key, dflt, ctx)
            : typeof dflt === 'number'
              ? await remote.getNumberDetails(key, dflt, ctx)
              : await remote.getObjectDetails(key, dflt, ctx)
      return { value: d.value, reason: d.reason, variant: d.variant, flagMetadata: d.flagMetadata, errorCode: d.errorCode }
    }

    it('answers class instances and contexts with a "__proto__" attribute as OFREP answers their JSON', async () => {
      const disguised = new Visitor('u2')
      Object.defineProperty(disguised, '__proto__', { value: Object.prototype, enumerable: false })
      const contexts = [new Visitor('u1'), disguised, JSON.parse('{"__proto__": null, "country": "FR"}'), JSON.parse('{"__proto__": "DE", "user_id": "u3", "age": 30}'), { country: 'AT', user_id: 'u4' }]
      for (const ctx of contexts) {
        const a = local('every-kind', 'z', ctx as EvaluationContext)
        assert.deepEqual(a, await ofrep('every-kind', 'z', ctx as EvaluationContext), JSON.stringify(ctx))
        assert.equal(a.errorCode, undefined)
      }
      assert.equal(local('every-kind', 'z', new Visitor('u1') as unknown as EvaluationContext).reason, 'DEFAULT')
    })

    it('checks the value type against the default for every pair of types, as OFREP', async () => {
      const defaults: JsonValue[] = [false, 'd', 0, { d: 1 }]
      let mismatches = 0
      for (const key of ['every-kind', 'no-rules', 'off']) {
        for (const dflt of defaults) {
          const ctx = { country: 'DE', user_id: 'u5' }
          const a = local(key, dflt, ctx)
          assert.deepEqual(a, await ofrep(key, dflt, ctx), `${key} with a ${typeof dflt} default`)
          if (a.errorCode === 'TYPE_MISMATCH') mismatches++
          else assert.equal(typeof a.value, typeof dflt)
        }
      }
      // Each flag serves one type: three of the four defaults mismatch.
      assert.equal(mismatches, 9)
    })
  })
})
