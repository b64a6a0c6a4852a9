// `queueworks listen` options and `queueworks trigger`, run for real (listen under tmux) against one
// started webhooks service and real local targets: path/method/header filters (skipped captures
// counted on screen and passed by the resume mark), --header on the local request only, --json
// through jq with nothing else on stdout, --concurrency (deliveries overlap up to N; a kill mid-flight
// loses none), trigger for every sender (the capture verifies as valid; a wrong secret does not),
// and the usage errors (exit 2).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { get, post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { BIN, runCli } from './helpers/cli.ts'
import { parseConcurrency } from '../scripts/listen/args.ts'
import { parseHeaderOption } from '../scripts/listen/deliver.ts'
import { headerFilter, methodFilter, pathFilter } from '../scripts/listen/filters.ts'
import { hasDotSegment } from '../src/webhooks/forward/outbound.ts'
import { SecretError } from '../scripts/trigger/events.ts'
import { NotCaptured, sendTestEvent } from '../scripts/trigger/send.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor } from './helpers/webhooks.ts'


const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '')

describe('webhooks: listen options and trigger (tmux)', function () {
  this.timeout(90_000)
  let sys: TestSystem
  const socket = `qw-listen-opt-${process.pid}`
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' })
  const screen = (s: string) => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', s)
  const dir = mkdtempSync(join(tmpdir(), 'qw-listen-opt-'))

  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
  })
  after(async () => {
    try {
      tmux('kill-server')
    } catch {}
    await sys?.stop()
  })

  it('refuses bad option values with exit 2 and the reason', async () => {
    // The CLI's exit code, once per command (each start costs a process); the checks behind it in-process.
    const [many, noSecret, climb, climbEncoded] = await Promise.all([
      runCli(['listen', 'tok', '--forward-to', 'http://127.0.0.1:9/x', '--key', 'wv_x', '--api', sys.root.webhooks, '--concurrency', '17']),
      runCli(['trigger', 'stripe', '--endpoint', 'tok', '--api', sys.root.webhooks], { QUEUEWORKS_TRIGGER_SECRET: '' }),
      runCli(['trigger', 'stripe', '--endpoint', 'tok', '--secret', 'whsec_x', '--api', sys.root.webhooks, '--path', '/../../api/v1/signup']),
      runCli(['trigger', 'stripe', '--endpoint', 'tok', '--secret', 'whsec_x', '--api', sys.root.webhooks, '--path', '/%2e%2E/%252e%252e/api/v1/signup']),
    ])
    for (const r of [climb, climbEncoded]) {
      assert.equal(r.code, 2, r.err)
      assert.match(r.err, /--path must not hold \. or \.\. segments, in any encoding/)
      assert.doesNotMatch(r.out, /Sent /)
    }
    for (const p of ['/..', '/a/./b', '/a/..;x/b', '/a\\..\\b', '/%2e', '/a/%252E%252e/b']) assert.equal(hasDotSegment(p), true, p)
    for (const p of ['/', '/github/push', '/a..b/.well-known', '/...', '/a%2fb']) assert.equal(hasDotSegment(p), false, p)
    assert.equal(many.code, 2, many.err)
    assert.match(many.err, /--concurrency must be an integer from 1 to 16 \(got "17"\)/)
    assert.equal(noSecret.code, 2, noSecret.err)
    assert.match(noSecret.err, /a signing secret is required: --secret S or QUEUEWORKS_TRIGGER_SECRET/)
    for (const c of ['0', 'four', '1.5', '-2']) assert.throws(() => parseConcurrency(c), new RegExp(`\\(got "${c.replace('.', '\\.')}"\\)`))
    assert.equal(parseConcurrency('16'), 16)
    assert.throws(() => pathFilter('re:('), /--filter-path "re:\(" is not a valid regular expression/)
    assert.throws(() => pathFilter('github/*'), /--filter-path must be a glob starting with \//)
    assert.throws(() => methodFilter(['PO ST']), /--filter-method takes methods such as POST/)
    assert.throws(() => headerFilter('Bad Name: x'), /--filter-headers takes 'Name' or 'Name: value'/)
    assert.throws(() => parseHeaderOption('Content-Length: 3'), /--header cannot set Content-Length/)
    assert.throws(() => parseHeaderOption('no colon'), /--header takes 'Name: value'/)
    await assert.rejects(sendTestEvent({ sender: 'svix', token: 'tok', secret: 'not-base64!', api: sys.root.webhooks }), SecretError)
  })

  it('filters by path, method and header, counts the skipped, adds --header locally only, and --json pipes into jq', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const local = await startTarget((r, _i, res) => res.end(`ok ${r.url}`))
    const state = join(dir, 'filters.json')
    try {
      const common = `QUEUEWORKS_LISTEN_STATE=${state} WEBHOOKS_API_KEY=${key} node ${BIN} listen ${ep.endpoint_id} --api ${sys.root.webhooks} --forward-to ${local.url}/in --filter-method post,PUT --filter-path '/github/**' --filter-headers 'X-GitHub-Event: pu*' --filter-headers X-Hub-Signature-256 --header 'User-Agent: via-listen' --header 'X-Local: 1'`
      tmux('new-session', '-d', '-s', 'filters', '-x', '220', '-y', '50', `cd ${process.cwd()} && ${common}; sleep 60`)
      await waitFor(() => screen('filters').includes('Ready.'), 20_000, 'listen to connect')
      assert.match(screen('filters'), /Only captures with method POST or PUT and path \/github\/\*\* and header X-GitHub-Event: pu\* and header X-Hub-Signature-256; the others are skipped/)
      const gh = (event: string) => ({ 'X-GitHub-Event': event, 'X-Hub-Signature-256': 'sha256=00', 'User-Agent': 'GitHub-Hookshot/1' })
      await capture(`${ep.url}/github/push`, { body: 'a', headers: gh('push') }) // #1 delivered
      await capture(`${ep.url}/github/push`, { method: 'GET', headers: gh('push') }) // #2 method
      await capture(`${ep.url}/gitlab/push`, { body: 'c', headers: gh('push') }) // #3 path
      await capture(`${ep.url}/github/issues`, { body: 'd', headers: gh('issues') }) // #4 header value
      await capture(`${ep.url}/github/deep/er`, { method: 'PUT', body: 'e', headers: gh('pull_request') }) // #5 delivered: ** spans segments
      await capture(`${ep.url}/github/x`, { body: 'f', headers: { 'X-GitHub-Event': 'push' } }) // #6 header missing
      await waitFor(() => /#6 .*skipped by --filter-headers 'X-Hub-Signature-256' \(4 skipped\)/.test(screen('filters')), 15_000, 'the last skipped line')
      const shown = screen('filters')
      assert.match(shown, /#2\s+GET\s+\/github\/push\s+skipped by --filter-method POST,PUT \(1 skipped\)/)
      assert.match(shown, /#3\s+POST\s+\/gitlab\/push\s+skipped by --filter-path \/github\/\*\* \(2 skipped\)/)
      assert.match(shown, /#4\s+POST\s+\/github\/issues\s+skipped by --filter-headers 'X-GitHub-Event: pu\*' \(3 skipped\)/)
      assert.deepEqual(local.received.map((r) => `${r.method} ${r.url}`), ['POST /in/github/push', 'PUT /in/github/deep/er'])
      // --header replaced the sender's User-Agent and added X-Local, on the local request only.
      const ua = local.received[0]!.rawHeaders.filter((_v, i, a) => i % 2 === 1 && a[i - 1]!.toLowerCase() === 'user-agent')
      assert.deepEqual(ua, ['via-listen'])
      assert.equal(local.received[0]!.headers['x-local'], '1')
      assert.equal(local.received[0]!.headers['x-github-event'], 'push')
      const stored = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/1`), { key })).json
      assert.equal(stored.headers['user-agent'], 'GitHub-Hookshot/1')
      assert.equal(stored.headers['x-local'], undefined)
      // The skipped #6 is the last capture: the resume mark still passed it.
      await waitFor(() => JSON.parse(read(state) || '{}')[`${sys.root.webhooks} ${ep.endpoint_id} ${local.url}/in`]?.last_id === 6, 10_000, 'the mark at #6')
      tmux('kill-session', '-t', 'filters')

      // The same six again with --json: stdout is one JSON object per capture, jq reads it.
      const raw = join(dir, 'raw.jsonl')
      const out = join(dir, 'jq.out')
      const err = join(dir, 'json.err')
      tmux('new-session', '-d', '-s', 'json', '-x', '220', '-y', '50', `cd ${process.cwd()} && ${common} --since 1 --json 2>${err} | tee ${raw} | jq -c --unbuffered '{id, status, skipped, skipped_by}' > ${out}; sleep 60`)
      await waitFor(() => read(out).trim().split('\n').length === 6, 20_000, 'six JSON lines through jq')
      const lines = read(out).trim().split('\n').map((l) => JSON.parse(l))
      assert.deepEqual(lines.map((l) => l.id), [1, 2, 3, 4, 5, 6])
      assert.deepEqual(lines.map((l) => l.status), [200, null, null, null, 200, null])
      assert.deepEqual(lines.map((l) => l.skipped), [false, true, true, true, false, true])
      assert.equal(lines[1].skipped_by, '--filter-method POST,PUT')
      const records = read(raw).trim().split('\n').map((l) => JSON.parse(l)) // every stdout line is JSON
      assert.equal(records.length, 6)
      assert.deepEqual(Object.keys(records[0]).sort(), ['duration_ms', 'error', 'id', 'method', 'path', 'query', 'skipped', 'skipped_by', 'status'])
      assert.equal(records[4].path, '/github/deep/er')
      assert.equal(records[4].method, 'PUT')
      assert.equal(typeof records[4].duration_ms, 'number')
      // The person's messages went to stderr.
      assert.match(read(err), /Catching up on 6 captures from #1 on/)
      assert.match(read(err), /Ready\./)
      assert.equal(local.received.length, 4)
      tmux('kill-session', '-t', 'json')
    } finally {
      await local.close()
    }
  })

  it('--concurrency 4 overlaps four deliveries, and a kill mid-flight loses none: the mark stays before the first unfinished one', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    let inFlight = 0
    let maxInFlight = 0
    let hold = true
    const held: ServerResponse[] = []
    const local = await startTarget((r, _i, res) => {
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      res.on('close', () => inFlight--)
      // While `hold`, #1 and #3 answer at once and the rest wait: #2 stays unfinished.
      if (hold && !/\/c\/[13]$/.test(r.url)) held.push(res)
      else res.end('ok')
    })
    const state = join(dir, 'concurrency.json')
    const markKey = `${sys.root.webhooks} ${ep.endpoint_id} ${local.url}/`
    const mark = () => JSON.parse(read(state) || '{}')[markKey]?.last_id
    try {
      for (let i = 1; i <= 6; i++) await capture(`${ep.url}/c/${i}`, { body: String(i) })
      const pidFile = join(dir, 'listen.pid')
      const cmd = (extra: string) =>
        `cd ${process.cwd()} && sh -c 'echo $$ > ${pidFile}; exec env QUEUEWORKS_LISTEN_STATE=${state} WEBHOOKS_API_KEY=${key} node ${BIN} listen ${ep.endpoint_id} --api ${sys.root.webhooks} --forward-to ${local.url}/ ${extra}'; sleep 60`
      tmux('new-session', '-d', '-s', 'conc', '-x', '220', '-y', '50', cmd('--since 1 --concurrency 4'))
      // #1 and #3 answer, so #5 and #6 start: #2, #4, #5, #6 are in flight together.
      await waitFor(() => local.received.length === 6 && held.length === 4, 20_000, 'all six started')
      assert.equal(maxInFlight, 4, 'four local requests at once, never more')
      assert.deepEqual(local.received.slice(0, 4).map((r) => r.url).sort(), ['/c/1', '/c/2', '/c/3', '/c/4'], 'taken in order')
      await waitFor(() => mark() === 1, 10_000, 'the mark at #1')
      assert.match(screen('conc'), /#3\s+POST\s+\/c\/3\s+→ 200/)
      assert.equal(mark(), 1, '#3 finished, but #2 did not: the mark stays at #1')

      process.kill(Number(read(pidFile).trim()), 'SIGKILL')
      await waitFor(() => inFlight === 0, 10_000, 'the killed CLI’s connections to close')
      tmux('kill-session', '-t', 'conc')
      hold = false
      const before = local.received.length
      tmux('new-session', '-d', '-s', 'conc2', '-x', '220', '-y', '50', cmd(''))
      await waitFor(() => local.received.length === before + 5, 20_000, 'the unfinished ones after the restart')
      assert.match(screen('conc2'), /Catching up on 5 captures missed since #1/)
      assert.deepEqual(local.received.slice(before).map((r) => r.url), ['/c/2', '/c/3', '/c/4', '/c/5', '/c/6'])
      await waitFor(() => mark() === 6, 10_000, 'the mark at #6')
      tmux('kill-session', '-t', 'conc2')
    } finally {
      for (const r of held) r.destroy()
      await local.close()
    }
  })

  it('trigger sends a signed event per sender that the service verifies as valid; another secret is invalid', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const secret = `whsec_${randomBytes(24).toString('base64')}`
    const senders = ['stripe', 'github', 'shopify', 'svix', 'standard-webhooks']
    // The command once (its secret from the environment), the same code in-process for the others.
    const cli = await runCli(['trigger', 'stripe', '--endpoint', ep.endpoint_id, '--api', sys.root.webhooks], { QUEUEWORKS_TRIGGER_SECRET: secret })
    assert.equal(cli.code, 0, cli.err)
    const first = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=1`), { key })).json.requests[0]
    assert.equal(cli.out, `Sent stripe payment_intent.succeeded to ${sys.root.webhooks}/hook/${ep.endpoint_id}/stripe → 200 (capture ${first.id})\n`)
    for (const sender of ['github', 'shopify', 'svix', 'standard-webhooks'] as const) {
      const sent = await sendTestEvent({ sender, token: ep.endpoint_id, secret, api: sys.root.webhooks })
      assert.equal(sent.status, 200)
      assert.equal(sent.url, `${sys.root.webhooks}/hook/${ep.endpoint_id}/${sender}`)
      assert.equal(typeof sent.captureId, 'number')
    }
    const list = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=10`), { key })).json.requests as any[]
    assert.equal(list.length, senders.length)
    const wrong = `whsec_${randomBytes(24).toString('base64')}`
    for (const s of senders) {
      const c = list.find((x) => x.path.endsWith(`/${s}`))
      assert.ok(c, `a capture of ${s}`)
      const ok = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/${c.id}/verify`), { secret }, { key })
      assert.equal(ok.status, 200, ok.text)
      assert.equal(ok.json.scheme, s)
      assert.equal(ok.json.valid, true, `${s}: ${ok.json.reason}`)
      const bad = await post(api(sys, `/endpoints/${ep.endpoint_id}/requests/${c.id}/verify`), { secret: wrong }, { key })
      assert.equal(bad.json.valid, false, `${s} with another secret`)
      assert.match(bad.json.reason, /does not match/)
    }
    const stripe = list.find((x) => x.path.endsWith('/stripe'))
    assert.equal(JSON.parse(stripe.body).type, 'payment_intent.succeeded')
    assert.equal(list.find((x) => x.path.endsWith('/github')).headers['x-github-event'], 'push')
    assert.equal(list.find((x) => x.path.endsWith('/shopify')).headers['x-shopify-topic'], 'orders/create')
    // An unknown endpoint is not captured: the service's reason (the command exits 1 with it).
    await assert.rejects(sendTestEvent({ sender: 'github', token: 'nosuchendpoint', secret, api: sys.root.webhooks }), (e: Error) => {
      assert.ok(e instanceof NotCaptured)
      assert.match(e.message, /\(HTTP 404\): the event was not captured/)
      return true
    })
  })
})
