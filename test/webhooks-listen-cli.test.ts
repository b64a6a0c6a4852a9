// The `queueworks listen` CLI, run for real under tmux (a terminal, so colours are on) against a
// local target server: byte-exact re-sends, the local answer reported back to the service,
// --replay-last, a dropped connection (said loudly, resumed with nothing missed), Ctrl-C → exit 0;
// resuming after a restart from its state file (what it missed, in order, once; --since, --no-resume);
// and its refusals: a --forward-to that is not http(s) or a bad --since → exit 2, an unknown endpoint → exit 1.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { BIN, runCli } from './helpers/cli.ts'
import { get } from './helpers/http.ts'
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'


describe('webhooks: listen CLI (tmux)', function () {
  this.timeout(90_000)
  let sys: TestSystem
  let proxy: TcpProxy
  let target: Target
  const socket = `qw-listen-${process.pid}`
  const tmux = (...a: string[]) => execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8' })
  const pane = (colours = false) => tmux('capture-pane', '-p', '-J', ...(colours ? ['-e'] : []), '-S', '-200', '-t', 'listen')

  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
    proxy = await startTcpProxy(sys.root.webhooks)
    target = await startTarget((r, _i, res) => {
      res.statusCode = 202
      res.end(`local got ${r.body.length} bytes`)
    })
  })
  after(async () => {
    try {
      tmux('kill-server')
    } catch {}
    await target?.close()
    await proxy?.close()
    await sys?.stop()
  })

  it('refuses a --forward-to that is not http(s) with exit 2, and an unknown endpoint with exit 1', async () => {
    const key = await signup(sys)
    const bad = await runCli(['listen', 'sometoken', '--forward-to', 'ftp://localhost/x', '--key', key, '--api', sys.root.webhooks])
    assert.equal(bad.code, 2)
    assert.match(bad.err, /--forward-to must be an http:\/\/ or https:\/\/ URL \(got "ftp:\/\/localhost\/x"\)/)
    const missing = await runCli(['listen', 'sometoken', '--key', key])
    assert.equal(missing.code, 2)
    assert.match(missing.err, /--forward-to is required/)
    const unknown = await runCli(['listen', 'nosuchtoken', '--forward-to', target.url, '--key', key, '--api', sys.root.webhooks])
    assert.equal(unknown.code, 1)
    assert.match(unknown.err, /Endpoint not found \(HTTP 404\)/)
    const other = await signup(sys)
    const ep = await createEndpoint(sys, other)
    const foreign = await runCli(['listen', ep.endpoint_id, '--forward-to', target.url, '--key', key, '--api', sys.root.webhooks])
    assert.equal(foreign.code, 1)
    const badSince = await runCli(['listen', 'sometoken', '--forward-to', target.url, '--key', key, '--since', 'yesterday'])
    assert.equal(badSince.code, 2)
    assert.match(badSince.err, /--since must be a capture id .* \(got "yesterday"\)/)
    const twoStarts = await runCli(['listen', 'sometoken', '--forward-to', target.url, '--key', key, '--since', '3', '--no-resume'])
    assert.equal(twoStarts.code, 2)
    assert.match(twoStarts.err, /--since and --no-resume choose different starting points/)
  })

  it('re-sends captures byte-exact, reports the local answer, survives a dropped connection, exits 0 on Ctrl-C', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    await capture(`${ep.url}/old`, { body: 'older' })
    await capture(`${ep.url}/replayed`, { body: 'the last one' })
    const dir = mkdtempSync(join(tmpdir(), 'qw-listen-'))
    const exitFile = join(dir, 'exit')
    const cmd = `cd ${process.cwd()} && QUEUEWORKS_LISTEN_STATE=${dir}/state.json WEBHOOKS_API_KEY=${key} node ${BIN} listen ${ep.endpoint_id} --api ${proxy.url} --forward-to '${target.url}/local?base=1' --replay-last 1; echo $? > ${exitFile}; sleep 60`
    tmux('new-session', '-d', '-s', 'listen', '-x', '220', '-y', '50', cmd)

    await waitFor(() => pane().includes('Ready.'), 20_000, 'the CLI to connect')
    await waitFor(() => target.received.length === 1, 10_000, 'the replayed capture')
    assert.equal(target.received[0]!.url, '/local/replayed?base=1')
    assert.equal(target.received[0]!.body.toString(), 'the last one')

    const body = randomBytes(4096)
    await capture(`${ep.url}/sub/path?x=1&y=%20`, {
      method: 'PATCH',
      body,
      headers: { 'content-type': 'application/octet-stream', 'X-Signature': 'sha256=abc', 'x-repeat': 'one' },
    })
    const got = await waitFor(() => target.received[1], 10_000, 'the live capture')
    assert.equal(got.method, 'PATCH')
    assert.equal(got.url, '/local/sub/path?base=1&x=1&y=%20')
    assert.deepEqual(got.body, body)
    const sent = (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/3`), { key })).json
    const hop = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'])
    const pairs = (raw: string[]) => raw.flatMap((v, i) => (i % 2 === 0 && !hop.has(v.toLowerCase()) ? [`${v}: ${raw[i + 1]}`] : []))
    assert.deepEqual(pairs(got.rawHeaders), pairs(sent.raw_headers), 'same headers, same order and case')
    assert.equal(got.headers['content-length'], '4096')

    const reported = await waitFor(async () => (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/3`), { key })).json.local_delivery, 10_000, 'the report')
    assert.equal(reported.status, 202)
    assert.equal(reported.body_preview, 'local got 4096 bytes')
    assert.equal(reported.url, `${target.url}/local/sub/path?base=1&x=1&y=%20`)
    await waitFor(() => /#3\s+PATCH\s+\/sub\/path\?x=1&y=%20\s+→ 202/.test(pane()), 10_000, 'the request line')
    assert.match(pane(true), /\x1b\[3\dm202/, 'the status is coloured')

    await proxy.drop()
    await waitFor(() => pane().includes('CONNECTION LOST'), 10_000, 'the loud message')
    await capture(`${ep.url}/while-down`, { body: 'missed?' })
    await proxy.restore()
    await waitFor(() => pane().includes('✔ Reconnected'), 20_000, 'the reconnect')
    await waitFor(() => target.received.length === 3, 10_000, 'the capture taken while disconnected')
    assert.equal(target.received[2]!.url, '/local/while-down?base=1')
    await capture(`${ep.url}/after`, { body: 'after' })
    await waitFor(() => target.received.length === 4, 10_000, 'a capture after reconnecting')
    assert.deepEqual(target.received.map((r) => r.url.split('?')[0]), ['/local/replayed', '/local/sub/path', '/local/while-down', '/local/after'])

    tmux('send-keys', '-t', 'listen', 'C-c')
    await waitFor(() => existsSync(exitFile) && readFileSync(exitFile, 'utf8').trim() !== '', 10_000, 'the CLI to exit')
    assert.equal(readFileSync(exitFile, 'utf8').trim(), '0')
  })

  it('after a restart delivers what it missed, in order, once, and says how many; --no-resume and --since', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const local = await startTarget((r, _i, res) => res.end(`ok ${r.url}`))
    const dir = mkdtempSync(join(tmpdir(), 'qw-resume-'))
    const state = join(dir, 'state', 'listen.json')
    let n = 0
    /** One listen run in its own tmux session; resolves with the session name once it is connected. */
    const start = async (extra: string) => {
      const session = `resume${++n}`
      const cmd = `cd ${process.cwd()} && QUEUEWORKS_LISTEN_STATE=${state} WEBHOOKS_API_KEY=${key} node ${BIN} listen ${ep.endpoint_id} --api ${sys.root.webhooks} --forward-to ${local.url}/in ${extra}; echo $? > ${dir}/${session}.exit; sleep 60`
      tmux('new-session', '-d', '-s', session, '-x', '200', '-y', '50', cmd)
      await waitFor(() => tmux('capture-pane', '-p', '-J', '-t', session).includes('Ready.'), 20_000, `${session} to connect`)
      return session
    }
    const screen = (session: string) => tmux('capture-pane', '-p', '-J', '-S', '-100', '-t', session)
    const stop = async (session: string) => {
      tmux('send-keys', '-t', session, 'C-c')
      await waitFor(() => existsSync(`${dir}/${session}.exit`) && readFileSync(`${dir}/${session}.exit`, 'utf8').trim() === '0', 10_000, `${session} to exit 0`)
      tmux('kill-session', '-t', session)
    }
    const paths = () => local.received.map((r) => r.url)
    try {
      const first = await start('')
      assert.match(screen(first), /First run for this endpoint and target/)
      await capture(`${ep.url}/one`, { body: '1' })
      await waitFor(() => local.received.length === 1, 10_000, '#1')
      await waitFor(() => existsSync(state) && JSON.parse(readFileSync(state, 'utf8'))[`${sys.root.webhooks} ${ep.endpoint_id} ${local.url}/in`]?.last_id === 1, 10_000, 'the state file')
      await stop(first)

      // Stopped: five captures arrive. The next start delivers exactly those, oldest first, once.
      for (let i = 2; i <= 6; i++) await capture(`${ep.url}/missed/${i}`, { body: String(i) })
      const second = await start('')
      assert.match(screen(second), /Catching up on 5 captures missed since #1 \(last delivered to this target\)/)
      await waitFor(() => local.received.length === 6, 15_000, 'the five missed captures')
      await capture(`${ep.url}/live`, { body: '7' })
      await waitFor(() => local.received.length === 7, 10_000, 'a live capture after catching up')
      assert.deepEqual(paths(), ['/in/one', '/in/missed/2', '/in/missed/3', '/in/missed/4', '/in/missed/5', '/in/missed/6', '/in/live'])
      await stop(second)

      // --no-resume: only what arrives from now on.
      await capture(`${ep.url}/while-stopped`, { body: '8' })
      const third = await start('--no-resume')
      await capture(`${ep.url}/new`, { body: '9' })
      await waitFor(() => local.received.length === 8, 10_000, 'the new capture')
      assert.equal(paths().at(-1), '/in/new')
      await stop(third)

      // --since ID: from that capture on, whatever was delivered before.
      const fourth = await start('--since 6')
      assert.match(screen(fourth), /Catching up on 4 captures from #6 on/)
      await waitFor(() => local.received.length === 12, 10_000, '#6 to #9 again')
      assert.deepEqual(paths().slice(8), ['/in/missed/6', '/in/live', '/in/while-stopped', '/in/new'])
      await stop(fourth)
      // The resume point is the furthest capture delivered.
      assert.equal(JSON.parse(readFileSync(state, 'utf8'))[`${sys.root.webhooks} ${ep.endpoint_id} ${local.url}/in`].last_id, 9)
    } finally {
      await local.close()
    }
  })
})
