// Per-flag usage: in-process providers report evaluation counts per flag and variant in batches
// (POST /api/v1/flag-usage), the service adds its own evaluations (OFREP, /evaluate), and both show
// per flag and period (GET …/flags/{key}/usage) and as the bounded Prometheus counter
// flag_usage_evaluations_total. Every limit on what a client may report, and every refusal.
import assert from 'node:assert/strict'
import { OpenFeature } from '@openfeature/server-sdk'
import { QueueworksProvider } from '../packages/openfeature-provider/src/index.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { until } from './helpers/wait.ts'

describe('flags: per-flag usage', function () {
  this.timeout(60_000)
  let sys: TestSystem
  let base: string
  let t: FlagsAccount
  let serverKey: string
  const report = (body: unknown, key = serverKey, headers: Record<string, string> = {}) => call('POST', `${base}/api/v1/flag-usage`, { json: body, key, headers })
  const usageOf = (acc: FlagsAccount, key: string, q = '') => get(`${acc.project}/flags/${key}/usage${q}`, { key: acc.apiKey })

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false, env: { FLAGS_USAGE_FLUSH_MS: '200' } })
    base = sys.url.flags
    t = await flagsAccount(sys, 'business')
    const flags = [
      { key: 'layout', type: 'string', enabled: true, default_value: 'a', rules: [], fallthrough: { variants: [{ name: 'v.1', weight: 50, value: 'wide' }, { name: 'v2', weight: 50, value: 'narrow' }] } },
      { key: 'plain', type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], value: true }] },
    ]
    for (const f of flags) assert.equal((await post(`${t.project}/flags`, f, { key: t.apiKey })).status, 201)
    serverKey = (await post(`${t.project}/environments/production/server-key/rotate`, undefined, { key: t.apiKey })).json.server_key
  })
  after(async () => {
    await OpenFeature.close()
    await sys?.stop()
  })

  it('adds what providers report to what the service evaluated, per variant and source, per hour and day', async () => {
    const provider = new QueueworksProvider({ url: base, serverKey, usage: { flushIntervalMs: 100 } })
    await OpenFeature.setProviderAndWait('usage', provider)
    const client = OpenFeature.getClient('usage')
    const byVariant: Record<string, number> = {}
    for (let i = 0; i < 50; i++) {
      const d = await client.getStringDetails('layout', '', { targetingKey: `user-${i}` })
      byVariant[d.variant!] = (byVariant[d.variant!] ?? 0) + 1
    }
    for (let i = 0; i < 30; i++) await client.getBooleanValue('plain', false, { country: i % 3 === 0 ? 'DE' : 'FR' })
    for (let i = 0; i < 10; i++) assert.equal((await post(`${base}/ofrep/v1/evaluate/flags/plain`, { context: { country: 'DE' } }, { key: t.sdkKey })).status, 200)
    await provider.onClose()
    assert.ok(byVariant['v.1']! > 0 && byVariant['v2']! > 0, JSON.stringify(byVariant))

    const layout = await until('the provider\'s layout counts', async () => {
      const r = await usageOf(t, 'layout')
      return r.json?.totals?.in_process === 50 ? r : undefined
    })
    assert.equal(layout.status, 200)
    assert.deepEqual(layout.json.totals, {
      service: 0,
      in_process: 50,
      variants: { 'v.1': { service: 0, in_process: byVariant['v.1'] }, v2: { service: 0, in_process: byVariant['v2'] } },
    })
    assert.equal(layout.json.period, 'hour')
    // One period, or two if the test ran across an hour boundary: together they are the totals.
    assert.equal(layout.json.periods.reduce((n: number, p: { in_process: number }) => n + p.in_process, 0), 50)
    const plain = await until('the service\'s own evaluations', async () => {
      const r = await usageOf(t, 'plain')
      return r.json?.totals?.service === 10 && r.json.totals.in_process === 30 ? r : undefined
    })
    assert.deepEqual(plain.json.totals.variants, { 'rule-0': { service: 10, in_process: 10 }, default: { service: 0, in_process: 20 } })
    const days = await usageOf(t, 'plain', '?period=day&days=3')
    assert.equal(days.status, 200, days.text)
    assert.equal(days.json.period, 'day')
    assert.deepEqual(days.json.totals, plain.json.totals)
    assert.equal(Date.parse(days.json.to) - Date.parse(days.json.from), 3 * 86_400_000)
  })

  it('counts every variant of a flag that serves many, and keeps the counts taken before the flag set changed', async () => {
    const acc = await flagsAccount(sys, 'business')
    // 12 variants: more than the provider keeps in its short list per flag.
    const variants = Array.from({ length: 12 }, (_, i) => ({ name: `v${i}`, weight: i < 8 ? 8 : 9, value: `value-${i}` }))
    assert.equal((await post(`${acc.project}/flags`, { key: 'many', type: 'string', enabled: true, default_value: 'd', rules: [], fallthrough: { variants } }, { key: acc.apiKey })).status, 201)
    assert.equal((await post(`${acc.project}/flags`, { key: 'other', type: 'boolean', enabled: true, default_value: false, rules: [] }, { key: acc.apiKey })).status, 201)
    const key = (await post(`${acc.project}/environments/production/server-key/rotate`, undefined, { key: acc.apiKey })).json.server_key
    const provider = new QueueworksProvider({ url: base, serverKey: key, usage: { flushIntervalMs: 3_600_000 } })
    await OpenFeature.setProviderAndWait('usage-many', provider)
    const client = OpenFeature.getClient('usage-many')
    const byVariant: Record<string, number> = {}
    const evaluate = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const d = await client.getStringDetails('many', '', { targetingKey: `user-${i}` })
        assert.equal(d.value, `value-${d.variant!.slice(1)}`)
        byVariant[d.variant!] = (byVariant[d.variant!] ?? 0) + 1
      }
    }
    await evaluate(0, 200)
    // Another flag changes: the provider's flag set (and the entries it counts on) is replaced.
    const etag = provider.etag
    assert.equal((await call('PUT', `${acc.project}/flags/other`, { key: acc.apiKey, json: { default_value: true } })).status, 200)
    await until('the provider has the changed set', () => provider.etag !== etag)
    await evaluate(200, 300)
    await provider.onClose()
    assert.equal(Object.keys(byVariant).length, 12, JSON.stringify(byVariant))

    const r = await until('the provider\'s counts', async () => {
      const u = await usageOf(acc, 'many')
      return u.json?.totals?.in_process === 300 ? u : undefined
    })
    assert.deepEqual(r.json.totals.variants, Object.fromEntries(Object.entries(byVariant).map(([v, n]) => [v, { service: 0, in_process: n }])))
  })

  it('shows per-flag counts on /metrics, and bounds the flag label', async () => {
    const acc = await flagsAccount(sys, 'business')
    for (let i = 0; i < 210; i += 30) {
      const batch = Array.from({ length: Math.min(30, 210 - i) }, (_, j) => post(`${acc.project}/flags`, { key: `m-${i + j}`, type: 'boolean', enabled: true }, { key: acc.apiKey }))
      for (const r of await Promise.all(batch)) assert.equal(r.status, 201, r.text)
    }
    const key = (await post(`${acc.project}/environments/production/server-key/rotate`, undefined, { key: acc.apiKey })).json.server_key
    const flags = Object.fromEntries(Array.from({ length: 210 }, (_, i) => [`m-${i}`, { default: 2 }]))
    // The label set is the process's: other test files may have filled it before this one runs.
    const metric = async () => {
      const text = (await get(`${sys.root.flags}/metrics`)).text
      const samples = [...text.matchAll(/^flag_usage_evaluations_total\{([^}]*)\} (\d+)/gm)].map((m) => ({ labels: m[1]!, n: Number(m[2]) }))
      const inProcess = samples.filter((x) => x.labels.includes('source="in_process"')).reduce((a, x) => a + x.n, 0)
      const flagLabels = new Set(samples.map((x) => /flag="([^"]+)"/.exec(x.labels)![1]!))
      return { inProcess, flagLabels }
    }
    const before = await metric()
    const r = await report({ flags }, key)
    assert.equal(r.status, 202, r.text)
    assert.equal(r.json.accepted, 420)
    const after = await metric()
    assert.equal(after.inProcess - before.inProcess, 420)
    assert.ok(after.flagLabels.has('_other'), 'flags past the bound share one label')
    assert.ok(after.flagLabels.size <= 201, `distinct flag labels: ${after.flagLabels.size}`)
    for (const l of after.flagLabels) assert.ok(l === '_other' || /^[^/]+\/[a-z0-9_-]+\/[A-Za-z0-9._-]+$/.test(l), l)
  })

  it('limits what a client may report: unknown flags and variants are not stored, and named', async () => {
    const acc = await flagsAccount(sys, 'business')
    assert.equal((await post(`${acc.project}/flags`, { key: 'f', type: 'boolean', enabled: true }, { key: acc.apiKey })).status, 201)
    const key = (await post(`${acc.project}/environments/production/server-key/rotate`, undefined, { key: acc.apiKey })).json.server_key
    const r = await report({ started_at: '2026-11-26T10:00:00Z', ended_at: '2026-11-26T10:01:00Z', flags: { f: { default: 3, 'no-such-variant': 5, disabled: 0 }, ghost: { default: 9 } } }, key)
    assert.equal(r.status, 202, r.text)
    assert.deepEqual(r.json, { accepted: 3, ignored_flags: ['ghost'], ignored_variants: ['f/no-such-variant'] })
    const u = await until('the stored count', async () => {
      const x = await usageOf(acc, 'f')
      return x.json?.totals?.in_process === 3 ? x : undefined
    })
    assert.deepEqual(u.json.totals.variants, { default: { service: 0, in_process: 3 } })
  })

  it('refuses bad batches with a 4xx JSON error naming the problem, storing nothing', async () => {
    const acc = await flagsAccount(sys, 'business')
    assert.equal((await post(`${acc.project}/flags`, { key: 'f', type: 'boolean', enabled: true }, { key: acc.apiKey })).status, 201)
    const key = (await post(`${acc.project}/environments/production/server-key/rotate`, undefined, { key: acc.apiKey })).json.server_key
    assertJsonError(await report({ flags: { f: { default: 1 } } }, acc.sdkKey), 403, /usage is reported with a server SDK key/)
    assertJsonError(await call('POST', `${base}/api/v1/flag-usage`, { json: { flags: { f: { default: 1 } } } }), 401, 'Unauthorized: invalid or missing SDK key')
    assertJsonError(await report({ flags: { f: { default: -1 } } }, key), 400, /flags\.f\.default/)
    assertJsonError(await report({ flags: { f: { default: 1.5 } } }, key), 400, /flags\.f\.default/)
    assertJsonError(await report({ flags: { f: { default: 2_000_000_000 } } }, key), 400, /flags\.f\.default/)
    assertJsonError(await report({ flags: { f: { default: '3' } } }, key), 400, /flags\.f\.default/)
    assertJsonError(await report({ flags: { f: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`v${i}`, 1])) } }, key), 400, /at most 64 variants/)
    assertJsonError(await report({ flags: Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`f${i}`, { default: 1 }])) }, key), 400, /at most 1000 flags/)
    assertJsonError(await report({ flags: { f: { default: 1 } }, extra: true }, key), 400)
    assertJsonError(await report({ flags: { f: { default: 1 } }, started_at: 'yesterday' }, key), 400, /started_at/)
    assertJsonError(await report({}, key), 400, /flags/)
    assertJsonError(await call('POST', `${base}/api/v1/flag-usage`, { raw: '{"flags":', key }), 400)
    const big = { flags: { f: { default: 1 } }, pad: 'x'.repeat(300 * 1024) }
    assertJsonError(await report(big, key), 413, /at most 262144 bytes/)
    const u = await usageOf(acc, 'f')
    assert.equal(u.status, 200, u.text)
    assert.deepEqual(u.json.totals, { service: 0, in_process: 0, variants: {} })
    assert.deepEqual(u.json.periods, [])
  })

  it('the usage API: unknown project, flag or environment → 404; bad period or window → 400; API key required', async () => {
    assertJsonError(await usageOf(t, 'nope'), 404, 'Flag not found')
    assertJsonError(await usageOf(t, 'plain', '?environment=nope'), 404, 'Environment not found')
    assertJsonError(await usageOf(t, 'plain', '?period=week'), 400, /period/)
    assertJsonError(await usageOf(t, 'plain', '?hours=0'), 400, /hours/)
    assertJsonError(await usageOf(t, 'plain', '?days=91'), 400, /days/)
    const other = await flagsAccount(sys)
    assertJsonError(await get(`${t.project}/flags/plain/usage`, { key: other.apiKey }), 404, 'Project not found')
    assertJsonError(await get(`${t.project}/flags/plain/usage`), 401)
  })
})
