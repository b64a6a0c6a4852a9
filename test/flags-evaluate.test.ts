// Flag evaluation through HTTP: bulk and single endpoints, SDK-key authentication, bad input,
// the per-key rate limit under concurrency, and the in-memory cache: served without database
// reads, invalidated across API replicas (a second app instance, and a second OS process).
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import { freePort } from './helpers/ports.ts'
import { gzipSync } from 'node:zlib'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'
import { bucketOf } from '../src/flags/engine/percent-bucket.ts'
import { startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'

interface Tenant {
  apiKey: string
  sdkKey: string
  projectId: string
  accountId: string
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Poll until `check` holds (a wait, not a timing assertion); returns how long it took. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<number> {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`)
    await sleep(25)
  }
  return Date.now() - started
}

describe('flags API: evaluation', () => {
  let sys: TestSystem
  let base: string
  let api: string
  let n = 0

  async function signup(): Promise<Tenant> {
    const r = await post(`${api}/signup`, { email: `eval${++n}@example.com` })
    assert.equal(r.status, 201, r.text)
    const acc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(r.json.api_key) })
    return { apiKey: r.json.api_key, sdkKey: r.json.sdk_key, projectId: r.json.project.id, accountId: String(acc!._id) }
  }
  const createFlag = async (t: Tenant, body: Record<string, unknown>) => {
    const r = await post(`${api}/projects/${t.projectId}/flags`, body, { key: t.apiKey })
    assert.equal(r.status, 201, r.text)
  }
  const updateFlag = (t: Tenant, key: string, body: unknown, root = api) => call('PUT', `${root}/projects/${t.projectId}/flags/${key}`, { json: body, key: t.apiKey })
  const evaluate = (sdkKey: unknown, body: Record<string, unknown> = {}, root = api) => post(`${root}/evaluate`, { sdk_key: sdkKey, ...body })

  before(async () => {
    // Command monitoring on, so that a test can see which database commands a request causes.
    const mongoUrl = new URL(process.env.TEST_MONGO_URL!)
    mongoUrl.searchParams.set('monitorCommands', 'true')
    sys = await startSystem({ services: ['flags'], workers: false, env: { MONGO_URL: mongoUrl.toString() } })
    base = sys.url.flags
    api = `${base}/api/v1`
  })
  after(async () => sys?.stop())

  describe('POST /api/v1/evaluate', () => {
    let t: Tenant
    before(async () => {
      t = await signup()
      await setPlan(sys.platform.db, t.accountId, 'business') // many requests below, no rate limit in the way
      await createFlag(t, {
        key: 'checkout',
        enabled: true,
        default_value: 'control',
        rules: [
          { conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }, { attribute: 'plan', operator: 'neq', value: 'free' }], value: 'dach-paid' },
          { conditions: [{ attribute: 'email', operator: 'contains', value: '@acme.com' }], value: 'acme' },
          { conditions: [{ attribute: 'user_id', operator: 'percent', value: 50 }], value: 'rollout' },
        ],
      })
      await createFlag(t, { key: 'dark-mode', enabled: true })
      await createFlag(t, { key: 'off', enabled: false, rules: [{ conditions: [], value: 'x' }] })
    })

    it('evaluates several flags for a context, with value, reason and rule index', async () => {
      const r = await evaluate(t.sdkKey, { flags: ['checkout', 'dark-mode', 'off'], context: { country: 'DE', plan: 'pro' } })
      assert.equal(r.status, 200, r.text)
      assert.deepEqual(r.json, {
        flags: {
          checkout: { value: 'dach-paid', reason: 'TARGETING_MATCH', rule_index: 0 },
          'dark-mode': { value: 'true', reason: 'DEFAULT', rule_index: null },
          off: { value: 'false', reason: 'DISABLED', rule_index: null },
        },
      })
      const acme = await evaluate(t.sdkKey, { flags: ['checkout'], context: { country: 'DE', plan: 'free', email: 'bo@acme.com' } })
      assert.deepEqual(acme.json.flags.checkout, { value: 'acme', reason: 'TARGETING_MATCH', rule_index: 1 })
    })

    it('serves the percentage rollout by murmur3 bucket of flag key + attribute', async () => {
      for (let i = 0; i < 30; i++) {
        const id = `user-${i}`
        const r = await evaluate(t.sdkKey, { flags: ['checkout'], context: { user_id: id } })
        const expected = bucketOf('checkout', id) < 50 ? 'rollout' : 'control'
        assert.equal(r.json.flags.checkout.value, expected, id)
      }
    })

    it('reports an unknown key per flag; without "flags" evaluates every flag', async () => {
      const r = await evaluate(t.sdkKey, { flags: ['dark-mode', 'nope', '__proto__'], context: {} })
      assert.equal(r.status, 200)
      assert.deepEqual(r.json.flags.nope, { value: null, reason: 'FLAG_NOT_FOUND', rule_index: null })
      assert.equal(r.json.flags.__proto__.reason, 'FLAG_NOT_FOUND')
      assert.equal(r.json.flags['dark-mode'].value, 'true')
      const all = await evaluate(t.sdkKey, { context: { country: 'AT', plan: 'pro' } })
      assert.deepEqual(Object.keys(all.json.flags), ['checkout', 'dark-mode', 'off'])
      assert.equal(all.json.flags.checkout.value, 'dach-paid')
      const empty = await evaluate(t.sdkKey, { flags: [] })
      assert.deepEqual(empty.json, { flags: {} })
    })

    it('answers flags of identical definitions under their own keys, a repeated key once, unicode unknown keys whole', async () => {
      const twin = { enabled: true, default_value: 'no', rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 'yes' }] }
      await createFlag(t, { key: 'twin-a', ...twin })
      await createFlag(t, { key: 'twin-b', ...twin })
      for (let round = 0; round < 2; round++) {
        // The second round is served from the pieces the first one built.
        const r = await evaluate(t.sdkKey, { flags: ['clé-🚀', 'twin-a', 'twin-b', 'twin-a', 'clé-🚀'], context: { plan: 'pro' } })
        assert.equal(r.status, 200, r.text)
        assert.equal(Number(r.headers.get('content-length')), Buffer.byteLength(r.text))
        assert.equal(r.text, JSON.stringify(r.json), 'no key twice in the text')
        assert.deepEqual(r.json, {
          flags: {
            'clé-🚀': { value: null, reason: 'FLAG_NOT_FOUND', rule_index: null },
            'twin-a': { value: 'yes', reason: 'TARGETING_MATCH', rule_index: 0 },
            'twin-b': { value: 'yes', reason: 'TARGETING_MATCH', rule_index: 0 },
          },
        })
      }
      const other = await evaluate(t.sdkKey, { flags: ['twin-b', 'twin-a'], context: { plan: 'free' } })
      assert.equal(other.text, '{"flags":{"twin-b":{"value":"no","reason":"DEFAULT","rule_index":null},"twin-a":{"value":"no","reason":"DEFAULT","rule_index":null}}}')
    })

    it('treats missing, null and unicode attributes as the rules say', async () => {
      const r = await evaluate(t.sdkKey, { flags: ['checkout'], context: { country: null, plan: 'pro', email: '中文@acme.com' } })
      assert.equal(r.json.flags.checkout.value, 'acme')
      const none = await evaluate(t.sdkKey, { flags: ['checkout'] })
      assert.deepEqual(none.json.flags.checkout, { value: 'control', reason: 'DEFAULT', rule_index: null })
    })

    it('401 for a missing or invalid SDK key; the API key is not accepted', async () => {
      const msg = 'Unauthorized: invalid or missing SDK key'
      assertJsonError(await post(`${api}/evaluate`, { flags: ['checkout'] }), 401, msg)
      assertJsonError(await evaluate('fbsdk_nope', { flags: ['checkout'] }), 401, msg)
      assertJsonError(await evaluate(t.apiKey, { flags: ['checkout'] }), 401, msg)
      assertJsonError(await evaluate(42, { flags: ['checkout'] }), 401, msg)
      assertJsonError(await post(`${api}/evaluate`, { flags: ['checkout'] }, { key: t.apiKey }), 401, msg)
      assertJsonError(await post(`${api}/evaluate`, { flags: ['checkout'] }, { key: t.sdkKey }), 401, msg) // body key only
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: '' }), 401, msg)
    })

    it('400 for bad input, naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string | RegExp]> = [
        [{ flags: 'checkout' }, 'flags must be an array'],
        [{ flags: [1] }, 'flags[0] must be a string'],
        [{ flags: ['x'.repeat(129)] }, 'flags[0] must be at most 128 characters'],
        [{ flags: Array(1001).fill('a') }, 'flags must have at most 1000 items'],
        [{ context: 'DE' }, 'context must be an object'],
        [{ context: [] }, 'context must be an object'],
        [{ context: { geo: { country: 'DE' } } }, 'context.geo must be a string, number, boolean or null'],
        [{ context: { tags: ['a'] } }, 'context.tags must be a string, number, boolean or null'],
        [{ context: { name: 'x'.repeat(2049) } }, 'context.name must be at most 2048 characters'],
        [{ context: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`a${i}`, i])) }, 'context must have at most 100 attributes'],
      ]
      for (const [body, message] of cases) assertJsonError(await evaluate(t.sdkKey, body), 400, message)
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: `{"sdk_key":"${t.sdkKey}","flags":[` }), 400, 'Malformed JSON body')
    })
  })

  describe('POST /api/v1/evaluate: the fast path and the general stack answer alike', () => {
    let t: Tenant
    before(async () => {
      t = await signup()
      await createFlag(t, { key: 'dark-mode', enabled: true, default_value: 'false', rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: 'true' }] })
    })
    const body = () => ({ sdk_key: t.sdkKey, flags: ['dark-mode', 'nope'], context: { plan: 'pro' } })
    const expected = {
      flags: { 'dark-mode': { value: 'true', reason: 'TARGETING_MATCH', rule_index: 0 }, nope: { value: null, reason: 'FLAG_NOT_FOUND', rule_index: null } },
    }

    it('answers JSON with a request id, for a plain, a charset-qualified, a chunked and a gzip-compressed body', async () => {
      const plain = await evaluate(t.sdkKey, { flags: ['dark-mode', 'nope'], context: { plan: 'pro' } })
      assert.equal(plain.status, 200, plain.text)
      assert.deepEqual(plain.json, expected)
      assert.match(plain.headers.get('content-type')!, /^application\/json; charset=utf-8$/)
      assert.match(plain.headers.get('x-request-id')!, /^[\w-]{8,}$/)
      const charset = await call('POST', `${api}/evaluate`, { json: body(), headers: { 'content-type': 'application/json; charset=utf-8' } })
      assert.deepEqual(charset.json, expected)
      const text = JSON.stringify(body())
      const chunked = await fetch(`${api}/evaluate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode(text.slice(0, 10)))
            c.enqueue(new TextEncoder().encode(text.slice(10)))
            c.close()
          },
        }),
        duplex: 'half',
      } as RequestInit)
      assert.equal(chunked.status, 200)
      assert.deepEqual(await chunked.json(), expected)
      const gz = await call('POST', `${api}/evaluate`, { raw: gzipSync(text), headers: { 'content-encoding': 'gzip' } })
      assert.equal(gz.status, 200, gz.text)
      assert.deepEqual(gz.json, expected)
    })

    it('a flag asked for twice is answered once; unicode keys are escaped correctly', async () => {
      const r = await evaluate(t.sdkKey, { flags: ['dark-mode', 'dark-mode', 'nope', 'clé "€"', 'nope'] })
      assert.equal(r.status, 200)
      assert.deepEqual(Object.keys(r.json.flags), ['dark-mode', 'nope', 'clé "€"'])
      // JSON.parse would hide a repeated member: count them in the text itself.
      assert.equal(r.text.split('"dark-mode":').length - 1, 1, r.text)
      assert.equal(r.text.split('"nope":').length - 1, 1, r.text)
      assert.equal(r.json.flags['clé "€"'].reason, 'FLAG_NOT_FOUND')
    })

    it('bad bodies get the same JSON errors as on any other route', async () => {
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: `{"sdk_key":"${t.sdkKey}","__proto__":{"x":1}}` }), 400, 'Malformed JSON body')
      // The same key spelled with \u escapes (here and in the context) is refused too.
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: `{"sdk_key":"${t.sdkKey}","\\u005f\\u005Fproto__":{"x":1}}` }), 400, 'Malformed JSON body')
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: `{"sdk_key":"${t.sdkKey}","context":{"__pr\\u006fto__":{"x":1}}}` }), 400, 'Malformed JSON body')
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: '{"sdk_key":' }), 400, 'Malformed JSON body')
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: JSON.stringify(body()), headers: { 'content-type': 'text/plain' } }), 415)
      const huge = JSON.stringify({ sdk_key: t.sdkKey, context: { pad: 'x'.repeat(1024 * 1024) } })
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: huge }), 413, 'Request body too large')
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: '[]' }), 401)
      assertJsonError(await call('POST', `${api}/evaluate`, { raw: 'null' }), 401)
      // Still serving after all of that.
      assert.deepEqual((await evaluate(t.sdkKey, { flags: ['dark-mode', 'nope'], context: { plan: 'pro' } })).json, expected)
    })
    it('keeps a sane caller X-Request-Id on answers and errors; replaces anything else', async () => {
      const id = 'req-0123456789.abc'
      const ok = await call('POST', `${api}/evaluate`, { json: body(), headers: { 'x-request-id': id } })
      assert.equal(ok.status, 200)
      assert.equal(ok.headers.get('x-request-id'), id)
      const denied = await call('POST', `${api}/evaluate`, { json: { sdk_key: 'fbsdk_nope' }, headers: { 'x-request-id': id } })
      assertJsonError(denied, 401)
      assert.equal(denied.headers.get('x-request-id'), id)
      const bad = await call('POST', `${api}/evaluate`, { raw: '{', headers: { 'x-request-id': 'has spaces <script>' } })
      assertJsonError(bad, 400, 'Malformed JSON body')
      assert.match(bad.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/)
    })

    it('a chunked body past the cap gets 413; a client that leaves mid-body costs nothing', async () => {
      const chunk = new TextEncoder().encode(`{"sdk_key":"${t.sdkKey}","context":{"pad":"${'x'.repeat(256 * 1024)}`)
      const big = await fetch(`${api}/evaluate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new ReadableStream({
          start(c) {
            for (let i = 0; i < 5; i++) c.enqueue(chunk) // 1.25 MiB, no Content-Length
            c.close()
          },
        }),
        duplex: 'half',
      } as RequestInit)
      assert.equal(big.status, 413)
      assert.equal(((await big.json()) as { error: string }).error, 'Request body too large')
      // Half a body, then the connection closes.
      const { port } = new URL(base)
      await new Promise<void>((resolve, reject) => {
        const s = net.connect(Number(port), '127.0.0.1', () => {
          s.write(`POST /api/v1/evaluate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"sdk_key":`)
          setTimeout(() => s.destroy(), 50)
        })
        s.on('close', () => resolve())
        s.on('error', reject)
      })
      assert.deepEqual((await evaluate(t.sdkKey, { flags: ['dark-mode', 'nope'], context: { plan: 'pro' } })).json, expected)
    })

    it('is measured like any route: request metrics under its template, evaluations by reason', async () => {
      const scrape = async () => (await call('GET', `${base}/metrics`)).text
      const sample = (text: string, re: RegExp) => Number(text.match(re)?.[1] ?? 0)
      const requests = /http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/evaluate"[^}]*status="200"[^}]*\} (\d+)/
      const matched = /flag_evaluations_total\{reason="TARGETING_MATCH"\} (\d+)/
      const missing = /flag_evaluations_total\{reason="FLAG_NOT_FOUND"\} (\d+)/
      const before = await scrape()
      for (let i = 0; i < 3; i++) assert.equal((await evaluate(t.sdkKey, { flags: ['dark-mode', 'nope'], context: { plan: 'pro' } })).status, 200)
      const after = await scrape()
      assert.equal(sample(after, requests) - sample(before, requests), 3)
      assert.equal(sample(after, matched) - sample(before, matched), 3)
      assert.equal(sample(after, missing) - sample(before, missing), 3)
    })
  })

  describe('GET /api/v1/evaluate/{flag_key}', () => {
    it('evaluates one flag without context; unknown flag 404; bad key 401', async () => {
      const t = await signup()
      await createFlag(t, { key: 'beta', enabled: true, default_value: 'b', rules: [{ conditions: [{ attribute: 'user_id', operator: 'percent', value: 100 }], value: 'a' }] })
      const r = await get(`${api}/evaluate/beta?sdk_key=${t.sdkKey}`)
      assert.equal(r.status, 200, r.text)
      // No context: the percent rule's attribute is missing, so it never matches.
      assert.deepEqual(r.json, { key: 'beta', value: 'b', reason: 'DEFAULT', rule_index: null })
      assertJsonError(await get(`${api}/evaluate/none?sdk_key=${t.sdkKey}`), 404, 'Flag not found')
      assertJsonError(await get(`${api}/evaluate/beta`), 401)
      assertJsonError(await get(`${api}/evaluate/beta?sdk_key=${t.apiKey}`), 401)
      assertJsonError(await get(`${api}/evaluate/beta?sdk_key=a&sdk_key=b`), 400)
      assertJsonError(await get(`${api}/evaluate/beta`, { key: t.sdkKey }), 401) // the key goes in the query
    })
  })

  describe('rate limit', () => {
    it('per SDK key by plan: of N concurrent requests exactly the allowed number pass, the rest 429 with Retry-After', async () => {
      const t = await signup() // free: 20 evaluation requests per second
      const other = await signup()
      await createFlag(t, { key: 'f', enabled: true })
      const rs = await Promise.all(Array.from({ length: 30 }, () => evaluate(t.sdkKey, { flags: ['f'] })))
      assert.equal(rs.filter((r) => r.status === 200).length, 20)
      const limited = rs.filter((r) => r.status === 429)
      assert.equal(limited.length, 10)
      assert.equal(limited[0]!.json.error, 'Rate limit exceeded: the free plan allows 20 evaluation requests per second per SDK key')
      assert.ok(Number(limited[0]!.headers.get('retry-after')) >= 1)
      // Another key has its own budget.
      assert.equal((await evaluate(other.sdkKey, { flags: ['f'] })).status, 200)
      // After the window, requests pass again.
      await eventually(async () => (await evaluate(t.sdkKey, { flags: ['f'] })).status === 200, 5_000)
    })

    it('a paid plan allows more', async () => {
      const t = await signup()
      await setPlan(sys.platform.db, t.accountId, 'starter')
      const rs = await Promise.all(Array.from({ length: 30 }, () => evaluate(t.sdkKey, { flags: [] })))
      assert.deepEqual([...new Set(rs.map((r) => r.status))], [200])
    })
  })

  describe('cache', () => {
    it('serves from memory: no database command once a project is cached', async () => {
      const t = await signup()
      await setPlan(sys.platform.db, t.accountId, 'business')
      await createFlag(t, { key: 'hot', enabled: true })
      await evaluate(t.sdkKey, { flags: ['hot'] }) // warm
      // Removed behind the service's back (no version bump, no message): still served from memory.
      await sys.platform.db.collection('flags').deleteOne({ project_id: t.projectId, key: 'hot' })
      const mongo = sys.platform.mongo
      const seen: string[] = []
      const onCommand = (e: { commandName: string; command: Record<string, unknown> }) => {
        if (JSON.stringify(e.command).includes(t.projectId) || ['find', 'aggregate'].includes(e.commandName)) seen.push(e.commandName)
      }
      mongo.on('commandStarted', onCommand)
      try {
        // The monitor sees this test's own read, so an empty list below means something.
        await sys.platform.db.collection('flags').findOne({ project_id: t.projectId })
        assert.deepEqual(seen.splice(0), ['find'])
        for (let i = 0; i < 20; i++) {
          const r = await evaluate(t.sdkKey, { flags: ['hot'], context: { i } })
          assert.equal(r.json.flags.hot.value, 'true')
        }
      } finally {
        mongo.off('commandStarted', onCommand)
      }
      // The once-a-second version check may run meanwhile; evaluation itself reads nothing.
      assert.ok(seen.length <= 2, `database commands during evaluation: ${seen.join(', ')}`)
    })

    it('the version check picks up a change whose message was lost', async () => {
      const t = await signup()
      await setPlan(sys.platform.db, t.accountId, 'business')
      await createFlag(t, { key: 'quiet', enabled: true })
      assert.equal((await evaluate(t.sdkKey, { flags: ['quiet'] })).json.flags.quiet.value, 'true')
      // A writer that stored the change but never published it.
      const db = sys.platform.db
      await db.collection('flags').updateOne({ project_id: t.projectId, key: 'quiet' }, { $set: { enabled: false } })
      await db.collection('flag_projects').updateOne({ _id: t.projectId as any }, { $inc: { version: 1 } })
      await eventually(async () => (await evaluate(t.sdkKey, { flags: ['quiet'] })).json.flags.quiet.value === 'false')
    })

    it('a second API instance (own Redis and Mongo connections, same data) serves the new value after an update', async () => {
      const sys2 = await startSystem({ services: ['flags'], workers: false, env: { MONGO_DB: sys.env.MONGO_DB!, QUEUE_PREFIX: sys.env.QUEUE_PREFIX! } })
      try {
        const api2 = `${sys2.url.flags}/api/v1`
        const t = await signup()
        await setPlan(sys.platform.db, t.accountId, 'business')
        await createFlag(t, { key: 'shared', enabled: true, default_value: 'v1' })
        assert.equal((await evaluate(t.sdkKey, { flags: ['shared'] }, api2)).json.flags.shared.value, 'v1') // cached on instance 2
        const r = await updateFlag(t, 'shared', { default_value: 'v2' })
        assert.equal(r.status, 200)
        const ms = await eventually(async () => (await evaluate(t.sdkKey, { flags: ['shared'] }, api2)).json.flags.shared.value === 'v2')
        if (process.env.DEBUG_FLAGS) console.log(`      instance 2 served the update after ${ms} ms`)
        // And the other way round, through a delete.
        assert.equal((await call('DELETE', `${api2}/projects/${t.projectId}/flags/shared`, { key: t.apiKey })).status, 204)
        await eventually(async () => (await evaluate(t.sdkKey, { flags: ['shared'] })).json.flags.shared.reason === 'FLAG_NOT_FOUND')
      } finally {
        await sys2.stop()
      }
    })

    it('a second API process (`main.ts api --service flags`) serves the new value after an update', async () => {
      const port = await freePort([3001, 3002, 3003])
      const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'flags'], {
        env: { ...process.env, ...sys.env, FLAGS_PORT: String(port), LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'ignore', 'pipe'],
      })
      let stderr = ''
      child.stderr!.on('data', (b) => (stderr += b))
      try {
        const api2 = `http://127.0.0.1:${port}/api/v1`
        await eventually(async () => {
          if (child.exitCode !== null) throw new Error(`api process exited: ${stderr}`)
          return fetch(`${api2}/evaluate`, { method: 'POST' }).then((r) => r.status === 401, () => false)
        }, 30_000)
        const t = await signup()
        await setPlan(sys.platform.db, t.accountId, 'business')
        await createFlag(t, { key: 'proc', enabled: true })
        assert.equal((await evaluate(t.sdkKey, { flags: ['proc'] }, api2)).json.flags.proc.value, 'true')
        assert.equal((await updateFlag(t, 'proc', { enabled: false })).status, 200)
        await eventually(async () => (await evaluate(t.sdkKey, { flags: ['proc'] }, api2)).json.flags.proc.reason === 'DISABLED')
        // A rotated key stops working there too.
        const rot = await post(`${api}/projects/${t.projectId}/sdk-key/rotate`, undefined, { key: t.apiKey })
        await eventually(async () => (await evaluate(t.sdkKey, { flags: ['proc'] }, api2)).status === 401)
        assert.equal((await evaluate(rot.json.sdk_key, { flags: ['proc'] }, api2)).status, 200)
      } finally {
        child.kill('SIGTERM')
        await waitForExit(child)
      }
    })
  })
})
