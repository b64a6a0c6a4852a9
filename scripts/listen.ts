// `queueworks listen`: follows an endpoint's live stream and re-sends every capture to a local
// URL (a laptop's dev server), then reports what the local server answered back to the service,
// where it shows on the capture (API and inspection page). Reconnects by itself, resuming after
// the last capture seen (Last-Event-ID), and says so loudly when the connection is lost; a stall
// watchdog catches connections that died silently (the smee-client failure). Across restarts it
// remembers the last capture delivered per endpoint and target (listen/resume-state.ts) and first
// delivers what it missed. Usage: see usage().
import { parseArgs, styleText } from 'node:util'
import type { EventSourceMessage } from 'eventsource-parser'
import { missedCaptures, type StartPoint } from './listen/catch-up.ts'
import { deliverLocally, type LocalResult } from './listen/deliver.ts'
import { reportResult } from './listen/report.ts'
import { recall, remember, stateFilePath, stateKey } from './listen/resume-state.ts'
import { openStream, StreamRefused } from './listen/stream.ts'

// Heartbeats come every 20 s. The override exists for tests and links slower than any heartbeat.
const STALL_MS = Number(process.env.QUEUEWORKS_LISTEN_STALL_MS) || 45_000
const BACKOFF_MS = [500, 1_000, 2_000, 5_000]

function usage(): string {
  return [
    'usage: queueworks listen <endpoint token> --forward-to http://localhost:8080/path',
    '         [--key wv_… (or WEBHOOKS_API_KEY)] [--api http://localhost:3003 (or WEBHOOKS_URL)]',
    '         [--since ID|TIME | --replay-last N | --no-resume] [--state-file FILE (or QUEUEWORKS_LISTEN_STATE)]',
  ].join('\n')
}

const colour = process.stdout.isTTY && !process.env.NO_COLOR
const paint = (style: Parameters<typeof styleText>[0], s: string) => (colour ? styleText(style, s) : s)
const time = () => new Date().toISOString().slice(11, 19)

function fail(code: number, message: string): never {
  process.stderr.write(`${paint('red', 'error:')} ${message}\n`)
  process.exit(code)
}

interface Capture {
  id: number
  method: string
  path: string
  query: string
  raw_headers: string[]
  body: string | null
  body_encoding: 'utf8' | 'base64' | null
  size_bytes: number
}

function parse() {
  let parsed
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        'forward-to': { type: 'string' },
        key: { type: 'string' },
        api: { type: 'string' },
        'replay-last': { type: 'string' },
        since: { type: 'string' },
        'no-resume': { type: 'boolean' },
        'state-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    })
  } catch (err) {
    fail(2, `${(err as Error).message}\n${usage()}`)
  }
  const { values, positionals } = parsed
  if (values.help) {
    process.stdout.write(`${usage()}\n`)
    process.exit(0)
  }
  // `queueworks listen <token>` (bin) and `npm run listen -- <token>` (no sub-command) both work.
  const args = positionals[0] === 'listen' ? positionals.slice(1) : positionals
  if (args.length !== 1) fail(2, `expected one endpoint token\n${usage()}`)
  const forwardTo = values['forward-to']
  if (!forwardTo) fail(2, `--forward-to is required\n${usage()}`)
  let target: URL
  try {
    target = new URL(forwardTo)
  } catch {
    fail(2, `--forward-to must be an http:// or https:// URL (got "${forwardTo}")`)
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') fail(2, `--forward-to must be an http:// or https:// URL (got "${forwardTo}")`)
  const key = values.key ?? process.env.WEBHOOKS_API_KEY
  if (!key) fail(2, 'an API key is required: --key wv_… or WEBHOOKS_API_KEY')
  const api = (values.api ?? process.env.WEBHOOKS_URL ?? 'http://localhost:3003').replace(/\/+$/, '')
  let replayLast = 0
  if (values['replay-last'] !== undefined) {
    if (!/^\d{1,4}$/.test(values['replay-last']) || Number(values['replay-last']) > 500) fail(2, `--replay-last must be an integer from 0 to 500 (got "${values['replay-last']}")`)
    replayLast = Number(values['replay-last'])
  }
  let since: StartPoint | null = null
  if (values.since !== undefined) {
    const v = values.since
    // An id names the first capture wanted again; a time, the first moment (as the list's `since`).
    if (/^\d{1,15}$/.test(v) && Number(v) >= 1) since = { after: Number(v) - 1 }
    else if (/^\d{4}-\d{2}-\d{2}/.test(v) && !Number.isNaN(Date.parse(v))) since = { since: v }
    else fail(2, `--since must be a capture id (1, 2, …) or an ISO 8601 time such as 2026-11-26T09:00:00Z (got "${v}")`)
  }
  const chosen = [since !== null && '--since', values['replay-last'] !== undefined && '--replay-last', values['no-resume'] && '--no-resume'].filter(Boolean)
  if (chosen.length > 1) fail(2, `${chosen.join(' and ')} choose different starting points: give one`)
  return { token: args[0]!, forwardTo: target.href, key, api, replayLast, since, resume: !values['no-resume'], stateFile: stateFilePath(values['state-file']) }
}

async function main() {
  const opts = parse()
  const { token, key, api } = opts
  const endpointUrl = `${api}/api/v1/endpoints/${encodeURIComponent(token)}`
  const auth = { authorization: `Bearer ${key}` }

  async function getJson(path: string): Promise<any> {
    let r: Response
    try {
      r = await fetch(endpointUrl + path, { headers: auth })
    } catch (err) {
      throw new Error(`cannot reach ${api}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`)
    }
    const body = (await r.json().catch(() => ({}))) as { error?: string }
    if (!r.ok) throw new StreamRefused(r.status, body.error ?? `HTTP ${r.status}`)
    return body
  }

  process.on('SIGINT', () => {
    process.stdout.write(`\n${paint('dim', 'Stopped.')}\n`)
    process.exit(0)
  })

  let endpoint: { url: string; name: string | null }
  let newest: Capture[]
  try {
    endpoint = await getJson('')
    newest = (await getJson(`/requests?limit=${Math.max(1, opts.replayLast)}`)).requests
  } catch (err) {
    if (err instanceof StreamRefused) fail(1, `${err.message} (HTTP ${err.status}) — check the token and the key`)
    fail(1, (err as Error).message)
  }
  let lastId = newest[0]?.id ?? 0
  const seen = new Set<number>()

  async function fetchBody(id: number): Promise<Buffer> {
    const r = await fetch(`${endpointUrl}/requests/${id}/body`, { headers: auth })
    if (!r.ok) throw new Error(`body of #${id}: HTTP ${r.status}`)
    return Buffer.from(await r.arrayBuffer())
  }

  function line(c: Capture, res: LocalResult) {
    const status =
      res.status === null
        ? paint(['red', 'bold'], `✖ ${res.error}`)
        : paint(res.status < 300 ? 'green' : res.status < 500 ? 'yellow' : 'red', String(res.status))
    const preview = res.body_preview.replace(/\s+/g, ' ').slice(0, 60)
    const shown = c.path.slice(`/hook/${token}`.length) || '/'
    process.stdout.write(
      `${paint('dim', time())}  ${paint('cyan', `#${c.id}`)}  ${paint('bold', c.method.padEnd(6))} ${shown}${c.query ? `?${c.query}` : ''}  → ${status}  ${res.latency_ms} ms${preview ? `  ${paint('dim', preview)}` : ''}\n`,
    )
  }

  const resumeKey = stateKey(api, token, opts.forwardTo)
  async function forward(c: Capture) {
    const body =
      c.body !== null ? Buffer.from(c.body, c.body_encoding === 'base64' ? 'base64' : 'utf8') : c.size_bytes ? await fetchBody(c.id) : Buffer.alloc(0)
    const res = await deliverLocally(opts.forwardTo, { method: c.method, subPath: c.path.slice(`/hook/${token}`.length), query: c.query, rawHeaders: c.raw_headers, body })
    // Recorded before anything else can fail: a restart then starts after this capture.
    try {
      remember(opts.stateFile, resumeKey, c.id)
    } catch (err) {
      process.stdout.write(paint('yellow', `  (could not record #${c.id} in ${opts.stateFile}: ${(err as Error).message})\n`))
    }
    line(c, res)
    const problem = await reportResult(`${endpointUrl}/requests/${c.id}/local-delivery`, auth, res)
    if (problem) process.stdout.write(paint('yellow', `  (could not report #${c.id} to the service: ${problem})\n`))
  }

  // One at a time, in the order received: the local server sees them as the sender sent them.
  let chain = Promise.resolve()
  const enqueue = (c: Capture) => {
    if (seen.has(c.id)) return
    seen.add(c.id)
    lastId = Math.max(lastId, c.id)
    chain = chain.then(() => forward(c)).catch((err) => void process.stdout.write(paint('red', `  #${c.id} not forwarded: ${(err as Error).message}\n`)))
  }

  process.stdout.write(`${paint('bold', 'Listening')} on ${endpoint.url}${endpoint.name ? ` (${endpoint.name})` : ''}\n`)
  process.stdout.write(`Forwarding to ${paint('bold', opts.forwardTo)} — Ctrl-C to quit\n`)
  const plural = (n: number) => `${n} capture${n === 1 ? '' : 's'}`
  if (opts.replayLast) {
    process.stdout.write(paint('dim', `Replaying the last ${plural(newest.length)}\n`))
    for (const c of [...newest].reverse()) enqueue(c)
  } else {
    const remembered = opts.resume && !opts.since ? recall(opts.stateFile, resumeKey) : null
    const from: StartPoint | null = opts.since ?? (remembered ? { after: remembered.last_id } : null)
    if (from) {
      let missed: Capture[]
      try {
        missed = await missedCaptures<Capture>(getJson, from)
      } catch (err) {
        fail(1, `cannot read the captures to catch up on: ${(err as Error).message}`)
      }
      const what = 'since' in from ? `received since ${from.since}` : opts.since ? `from #${from.after + 1} on` : `missed since #${from.after} (last delivered to this target)`
      process.stdout.write(
        missed.length ? paint(['yellow', 'bold'], `Catching up on ${plural(missed.length)} ${what}\n`) : paint('dim', `Nothing to catch up on: no captures ${what}\n`),
      )
      for (const c of missed) enqueue(c)
    } else if (opts.resume) {
      process.stdout.write(paint('dim', `First run for this endpoint and target: starting with new captures (remembered in ${opts.stateFile})\n`))
    }
  }

  let failures = 0
  let connectedOnce = false
  for (;;) {
    const ac = new AbortController()
    let stall: NodeJS.Timeout | undefined
    const kick = () => {
      clearTimeout(stall)
      stall = setTimeout(() => ac.abort(new Error(`no data for ${STALL_MS / 1000} s`)), STALL_MS)
    }
    const onEvent = (ev: EventSourceMessage) => {
      if (ev.event === 'capture') enqueue(JSON.parse(ev.data) as Capture)
    }
    const resumeFrom = lastId
    let reason = 'the server closed the stream'
    try {
      kick()
      const s = openStream({ api, token, key, lastEventId: resumeFrom, signal: ac.signal, onEvent, onActivity: kick })
      s.ended.catch(() => undefined) // awaited below once opened; a refused connection rejects both
      await s.opened
      if (connectedOnce) process.stdout.write(`${paint(['green', 'bold'], '✔ Reconnected')} — catching up on captures after #${resumeFrom}\n`)
      else process.stdout.write(`${paint('green', 'Ready.')} Waiting for requests…\n`)
      connectedOnce = true
      failures = 0
      await s.ended
    } catch (err) {
      if (err instanceof StreamRefused && (err.status === 401 || err.status === 404)) fail(1, `${err.message} (HTTP ${err.status})`)
      const e = ac.signal.aborted ? (ac.signal.reason as Error) : (err as Error & { cause?: Error })
      reason = (e as Error & { cause?: Error }).cause?.message ?? e.message
    } finally {
      clearTimeout(stall)
      ac.abort()
    }
    const wait = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)]!
    if (failures === 0) {
      process.stdout.write(
        `${paint(['red', 'bold', 'inverse'], ' CONNECTION LOST ')} ${paint('red', `to ${api} (${reason}). Captures are kept by the service; reconnecting…`)}\n`,
      )
    }
    failures++
    await new Promise((r) => setTimeout(r, wait))
  }
}

main().catch((err) => fail(1, (err as Error).stack ?? String(err)))
