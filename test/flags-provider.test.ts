// The in-process OpenFeature provider (packages/openfeature-provider) with the real OpenFeature
// server SDK against the service: the same details as the OFREP provider for the same flags and
// contexts (values, reasons, variants, metadata, errors), changes arriving over the change stream
// or, without it, by ETag polling, a start from the saved copy while the service is unreachable
// (and how stale it says it is), recovery, and a refused key.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { OpenFeature, ProviderEvents, ProviderStatus, type Client, type EvaluationContext, type EvaluationDetails, type JsonValue } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { QueueworksProvider } from '../packages/openfeature-provider/src/index.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { until } from './helpers/wait.ts'
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts'

describe('flags: in-process OpenFeature provider', () => {
  let sys: TestSystem
  let base: string
  let t: FlagsAccount
  let serverKey: string
  let dir: string
  let local: Client
  let remote: Client
  let provider: QueueworksProvider
  let proxy: TcpProxy | null = null
  let n = 0
  const domain = () => `provider-test-${++n}`
  const putFlag = (key: string, body: Record<string, unknown>) => call('PUT', `${t.project}/flags/${key}`, { key: t.apiKey, json: body })

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
    t = await flagsAccount(sys, 'business')
    dir = mkdtempSync(join(tmpdir(), 'qw-provider-'))
    const seg = await post(`${t.project}/segments`, { name: 'beta', conditions: [{ attribute: 'email', operator: 'ends_with', value: '@beta.example' }] }, { key: t.apiKey })
    assert.equal(seg.status, 201, seg.text)
    const flags = [
      { key: 'new-checkout', enabled: true, default_value: 'false', rules: [{ conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }], value: 'true' }] },
      { key: 'beta-ui', type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [], segments: ['beta'], value: true }] },
      { key: 'price', type: 'number', enabled: true, default_value: 10, rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 7.5 }] },
      { key: 'limits', type: 'object', enabled: true, default_value: { max: 3 }, rules: [{ conditions: [{ attribute: 'version', operator: 'semver_gte', value: '2.0.0' }], value: { max: 10 } }] },
      {
        key: 'layout',
        type: 'string',
        enabled: true,
        default_value: 'a',
        rules: [{ conditions: [{ attribute: 'targetingKey', operator: 'percent', value: 60 }], variants: [{ name: 'wide', weight: 50, value: 'wide' }, { name: 'narrow', weight: 50, value: 'narrow' }] }],
        fallthrough: { variants: [{ name: 'x', weight: 30, value: 'x' }, { name: 'y', weight: 70, value: 'y' }] },
      },
      { key: 'legacy', enabled: false, rules: [{ conditions: [], value: 'true' }] },
    ]
    for (const f of flags) {
      const r = await post(`${t.project}/flags`, f, { key: t.apiKey })
      assert.equal(r.status, 201, r.text)
    }
    serverKey = (await post(`${t.project}/environments/production/server-key/rotate`, undefined, { key: t.apiKey })).json.server_key
    provider = new QueueworksProvider({ url: base, serverKey, cacheFile: join(dir, 'flags.json'), usage: false })
    const d1 = domain()
    await OpenFeature.setProviderAndWait(d1, provider)
    local = OpenFeature.getClient(d1)
    const d2 = domain()
    await OpenFeature.setProviderAndWait(d2, new OFREPProvider({ baseUrl: base, headers: [['Authorization', `Bearer ${t.sdkKey}`]] }))
    remote = OpenFeature.getClient(d2)
  })
  after(async () => {
    await OpenFeature.close()
    await proxy?.close()
    await sys?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const strip = <T extends JsonValue>(d: EvaluationDetails<T>) => ({ value: d.value, reason: d.reason, variant: d.variant, errorCode: d.errorCode, flagMetadata: d.flagMetadata })

  it('gives the OFREP provider\'s details for every type, rule, segment, split, disabled flag and error', async () => {
    const contexts: EvaluationContext[] = [
      {},
      { targetingKey: 'u1', country: 'DE', email: 'a@beta.example', plan: 'pro', version: '2.1.0' },
      { targetingKey: 'u2', country: 'FR', email: 'b@else.example', plan: 'free', version: '1.9.9' },
      { targetingKey: 'user-77', country: 'AT', version: 'not-a-version' },
      { targetingKey: 'user-1234', plan: 'pro' },
      { user_id: 'x', targetingKey: 'abc', nested: { a: 1 }, list: [1], n: 3, ok: true },
    ]
    let compared = 0
    for (const ctx of contexts) {
      const pairs: [Promise<EvaluationDetails<JsonValue>>, Promise<EvaluationDetails<JsonValue>>][] = [
        [local.getBooleanDetails('new-checkout', true, ctx), remote.getBooleanDetails('new-checkout', true, ctx)],
        [local.getBooleanDetails('beta-ui', true, ctx), remote.getBooleanDetails('beta-ui', true, ctx)],
        [local.getNumberDetails('price', 0, ctx), remote.getNumberDetails('price', 0, ctx)],
        [local.getObjectDetails('limits', {}, ctx), remote.getObjectDetails('limits', {}, ctx)],
        [local.getStringDetails('layout', 'z', ctx), remote.getStringDetails('layout', 'z', ctx)],
        [local.getBooleanDetails('legacy', true, ctx), remote.getBooleanDetails('legacy', true, ctx)],
        // Errors: a missing flag, a type the flag does not serve.
        [local.getBooleanDetails('no-such-flag', true, ctx), remote.getBooleanDetails('no-such-flag', true, ctx)],
        [local.getNumberDetails('layout', 1, ctx), remote.getNumberDetails('layout', 1, ctx)],
        [local.getStringDetails('beta-ui', 'd', ctx), remote.getStringDetails('beta-ui', 'd', ctx)],
      ]
      for (const [a, b] of pairs) {
        assert.deepEqual(strip(await a), strip(await b), JSON.stringify(ctx))
        compared++
      }
    }
    assert.equal(compared, 54)
    // Spot checks that the comparison compares something.
    const d = await local.getStringDetails('layout', 'z', { targetingKey: 'u1' })
    assert.ok(['wide', 'narrow', 'x', 'y'].includes(d.value))
    assert.equal((await local.getBooleanDetails('no-such-flag', true, {})).errorCode, 'FLAG_NOT_FOUND')
    assert.equal((await local.getNumberDetails('layout', 1, {})).errorCode, 'TYPE_MISMATCH')
    assert.deepEqual(await local.getObjectValue('limits', {}, { version: '2.0.0' }), { max: 10 })
  })

  it('a context of more than 100 attributes → INVALID_CONTEXT, as OFREP', async () => {
    const big = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`a${i}`, i]))
    const a = await local.getBooleanDetails('new-checkout', true, big)
    const b = await remote.getBooleanDetails('new-checkout', true, big)
    assert.equal(a.errorCode, 'INVALID_CONTEXT')
    assert.deepEqual(strip(a), strip(b))
  })

  it('a change reaches the provider over the change stream, with ConfigurationChanged naming the flag', async () => {
    await until('the stream connected', () => (provider.syncStatus().streaming ? true : undefined))
    assert.equal(provider.syncStatus().stalenessMs, 0)
    const seen: string[][] = []
    const handler = (e?: { flagsChanged?: string[] }) => void seen.push(e?.flagsChanged ?? [])
    const listen = handler as Parameters<Client['addHandler']>[1]
    local.addHandler(ProviderEvents.ConfigurationChanged, listen)
    try {
      const etag = provider.etag
      assert.equal((await putFlag('price', { default_value: 11 })).status, 200)
      await until('the new price', async () => ((await local.getNumberValue('price', 0, {})) === 11 ? true : undefined))
      assert.notEqual(provider.etag, etag)
      await until('the event', () => (seen.some((k) => k.includes('price')) ? true : undefined))
      assert.deepEqual(seen.find((k) => k.includes('price')), ['price'])
    } finally {
      local.removeHandler(ProviderEvents.ConfigurationChanged, listen)
    }
    assert.equal(provider.syncStatus().source, 'service')
    assert.ok(existsSync(join(dir, 'flags.json')), 'the copy is saved')
  })

  it('without the stream, ETag polling brings changes', async () => {
    const p = new QueueworksProvider({ url: base, serverKey, stream: false, pollIntervalMs: 100, usage: false })
    const d = domain()
    await OpenFeature.setProviderAndWait(d, p)
    const client = OpenFeature.getClient(d)
    const before = await client.getNumberValue('price', 0, { plan: 'pro' })
    assert.equal((await putFlag('price', { rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: before + 1 }] })).status, 200)
    await until('the polled change', async () => ((await client.getNumberValue('price', 0, { plan: 'pro' })) === before + 1 ? true : undefined))
    assert.equal(p.syncStatus().streaming, false)
    assert.ok(p.syncStatus().stalenessMs! < 10_000)
    await p.onClose()
  })

  it('starts from the saved copy while the service is unreachable, says how stale it is, and recovers', async () => {
    proxy = await startTcpProxy(base)
    const file = join(dir, 'via-proxy.json')
    const first = new QueueworksProvider({ url: proxy.url, serverKey, cacheFile: file, usage: false, maxStreamRetryMs: 200, pollIntervalMs: 200 })
    const d1 = domain()
    await OpenFeature.setProviderAndWait(d1, first)
    const expected = await OpenFeature.getClient(d1).getStringDetails('layout', 'z', { targetingKey: 'u1' })
    await first.onClose()
    await proxy.drop()

    const p = new QueueworksProvider({ url: proxy.url, serverKey, cacheFile: file, usage: false, maxStreamRetryMs: 200, pollIntervalMs: 200 })
    const d = domain()
    const stale: string[] = []
    OpenFeature.getClient(d).addHandler(ProviderEvents.Stale, (e) => void stale.push(e?.message ?? ''))
    await OpenFeature.setProviderAndWait(d, p)
    const client = OpenFeature.getClient(d)
    const s = p.syncStatus()
    assert.equal(s.source, 'file')
    assert.equal(s.unreachable, true)
    assert.equal(s.streaming, false)
    assert.ok(s.stalenessMs! >= 0 && s.confirmedAt !== null)
    assert.match(s.lastError!, /flag service unreachable/)
    assert.deepEqual(strip(await client.getStringDetails('layout', 'z', { targetingKey: 'u1' })), strip(expected))
    await until('the Stale event', () => (stale.length > 0 ? true : undefined))

    const ready: number[] = []
    client.addHandler(ProviderEvents.Ready, () => void ready.push(1))
    await proxy.restore()
    await until('the service copy', () => (p.syncStatus().source === 'service' && !p.syncStatus().unreachable ? true : undefined))
    await until('the Ready event', () => (ready.length > 0 ? true : undefined))
    await until('the stream back', () => (p.syncStatus().streaming ? true : undefined))
    assert.equal(p.syncStatus().stalenessMs, 0)
    await p.onClose()
  })

  it('with neither the service nor a saved copy the provider is not ready and answers the default with PROVIDER_NOT_READY', async () => {
    const p = new QueueworksProvider({ url: 'http://127.0.0.1:9', serverKey, usage: false, requestTimeoutMs: 1_000 })
    const d = domain()
    await assert.rejects(OpenFeature.setProviderAndWait(d, p), /no flag set yet/)
    const client = OpenFeature.getClient(d)
    assert.equal(client.providerStatus, ProviderStatus.ERROR)
    const r = await client.getBooleanDetails('new-checkout', true, {})
    assert.equal(r.value, true)
    assert.equal(r.reason, 'ERROR')
    assert.equal(r.errorCode, 'PROVIDER_NOT_READY')
    assert.equal(p.syncStatus().source, 'none')
    await p.onClose()
  })

  it('with the CPU saturated by other processes, a provider still starts within its request deadline and follows a change', async () => {
    const burners = [0, 1, 2].map(() => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
    try {
      const p = new QueueworksProvider({ url: base, serverKey, usage: false })
      const d = domain()
      await OpenFeature.setProviderAndWait(d, p)
      const client = OpenFeature.getClient(d)
      assert.equal(p.syncStatus().source, 'service')
      await until('the stream connected', () => (p.syncStatus().streaming ? true : undefined), 20_000)
      const next = (await client.getNumberValue('price', 0, {})) + 100
      assert.equal((await putFlag('price', { default_value: next })).status, 200)
      await until('the change under load', async () => ((await client.getNumberValue('price', 0, {})) === next ? true : undefined), 20_000)
      await p.onClose()
    } finally {
      for (const b of burners) b.kill('SIGKILL')
    }
  })

  it('a client-side key is refused for good: the provider is FATAL with the service\'s message', async () => {
    const p = new QueueworksProvider({ url: base, serverKey: t.sdkKey, usage: false })
    const d = domain()
    await assert.rejects(OpenFeature.setProviderAndWait(d, p), /flag set refused \(403\): Forbidden: the flag set needs a server SDK key/)
    assert.equal(OpenFeature.getClient(d).providerStatus, ProviderStatus.FATAL)
    await p.onClose()
  })
})
