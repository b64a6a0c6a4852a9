// `queueworks listen`: follows an endpoint's live stream and re-sends every capture to a local
// URL (a laptop's dev server), then reports what the local server answered back to the service,
// where it shows on the capture (API and inspection page). Reconnects by itself, resuming after
// the last capture seen (Last-Event-ID), and says so loudly when the connection is lost; a stall
// watchdog catches connections that died silently (the smee-client failure). The endpoint deleted
// meanwhile ends it with exit code 1 and a message saying so. Across restarts it
// remembers the last capture delivered per endpoint and target (listen/resume-state.ts) and first
// delivers what it missed. Filters, extra headers, --json and --concurrency: listen/args.ts and
// docs/webhooks.md. Usage: see listen/args.ts.
import type { EventSourceMessage } from 'eventsource-parser'
import { parseListenArgs } from './listen/args.ts'
import { missedCaptures, type StartPoint } from './listen/catch-up.ts'
import { deliverLocally, type LocalResult } from './listen/deliver.ts'
import { noFilters, rejectedBy } from './listen/filters.ts'
import { fail, isJson, jsonMode, paint, record, say } from './listen/output.ts'
import { DeliveryPool } from './listen/pool.ts'
import { reportResult } from './listen/report.ts'
import { recall, remember, stateKey } from './listen/resume-state.ts'
import { openStream, StreamRefused } from './listen/stream.ts'

// Heartbeats come every 20 s. The override (docs/webhooks.md) is for links that hold bytes back
// longer; zero, negative or garbage would abort every connection at once, so they mean the default.
const stallEnv = Number(process.env.QUEUEWORKS_LISTEN_STALL_MS)
const STALL_MS = stallEnv > 0 ? stallEnv : 45_000
const BACKOFF_MS = [500, 1_000, 2_000, 5_000]

const time = () => new Date().toISOString().slice(11, 19)

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

async function main() {
  const opts = parseListenArgs(process.argv.slice(2))
  jsonMode(opts.json)
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

  let skipped = 0
  process.on('SIGINT', () => {
    say(`\n${paint('dim', `Stopped.${skipped ? ` ${skipped} skipped by filters.` : ''}`)}`)
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

  const subPathOf = (c: Capture) => c.path.slice(`/hook/${token}`.length) || '/'
  const head = (c: Capture) => `${paint('dim', time())}  ${paint('cyan', `#${c.id}`)}  ${paint('bold', c.method.padEnd(6))} ${subPathOf(c)}${c.query ? `?${c.query}` : ''}`

  function line(c: Capture, res: LocalResult) {
    if (isJson()) {
      record({ id: c.id, method: c.method, path: subPathOf(c), query: c.query, status: res.status, duration_ms: res.latency_ms, error: res.error, skipped: false, skipped_by: null })
      return
    }
    const status =
      res.status === null
        ? paint(['red', 'bold'], `✖ ${res.error}`)
        : paint(res.status < 300 ? 'green' : res.status < 500 ? 'yellow' : 'red', String(res.status))
    const preview = res.body_preview.replace(/\s+/g, ' ').slice(0, 60)
    say(`${head(c)}  → ${status}  ${res.latency_ms} ms${preview ? `  ${paint('dim', preview)}` : ''}`)
  }

  function skippedLine(c: Capture, by: string) {
    skipped++
    if (isJson()) record({ id: c.id, method: c.method, path: subPathOf(c), query: c.query, status: null, duration_ms: null, error: null, skipped: true, skipped_by: by })
    else say(paint('dim', `${head(c)}  skipped by ${by} (${skipped} skipped)`))
  }

  const resumeKey = stateKey(api, token, opts.forwardTo)
  function mark(id: number) {
    try {
      remember(opts.stateFile, resumeKey, id)
    } catch (err) {
      say(paint('yellow', `  (could not record #${id} in ${opts.stateFile}: ${(err as Error).message})`))
    }
  }

  async function forward(c: Capture, tried: () => void) {
    const by = rejectedBy(opts.filters, { method: c.method, subPath: subPathOf(c), raw_headers: c.raw_headers })
    if (by) return skippedLine(c, by)
    const body =
      c.body !== null ? Buffer.from(c.body, c.body_encoding === 'base64' ? 'base64' : 'utf8') : c.size_bytes ? await fetchBody(c.id) : Buffer.alloc(0)
    const res = await deliverLocally(opts.forwardTo, {
      method: c.method,
      subPath: c.path.slice(`/hook/${token}`.length),
      query: c.query,
      rawHeaders: c.raw_headers,
      body,
      extraHeaders: opts.extraHeaders,
    })
    // The mark moves before anything else can fail: a restart then starts after this capture.
    tried()
    line(c, res)
    const problem = await reportResult(`${endpointUrl}/requests/${c.id}/local-delivery`, auth, res)
    if (problem) say(paint('yellow', `  (could not report #${c.id} to the service: ${problem})`))
  }

  // Taken in the order received, up to --concurrency at a time (one by default: the local server
  // then sees them as the sender sent them); the mark passes only a prefix of tried ones (pool.ts).
  const pool = new DeliveryPool<Capture>(
    opts.concurrency,
    (c, tried) =>
      forward(c, tried).catch((err) => {
        // Its body could not be read from the service (a deleted capture, an outage): the local
        // target was never tried. Shown, and in --json a record too, so a script misses nothing.
        const error = `not forwarded: ${(err as Error).message}`
        if (isJson()) record({ id: c.id, method: c.method, path: subPathOf(c), query: c.query, status: null, duration_ms: null, error, skipped: false, skipped_by: null })
        say(paint('red', `  #${c.id} ${error}`))
      }),
    mark,
  )
  const enqueue = (c: Capture) => {
    if (seen.has(c.id)) return
    seen.add(c.id)
    lastId = Math.max(lastId, c.id)
    pool.add(c)
  }

  say(`${paint('bold', 'Listening')} on ${endpoint.url}${endpoint.name ? ` (${endpoint.name})` : ''}`)
  say(`Forwarding to ${paint('bold', opts.forwardTo)}${opts.concurrency > 1 ? ` (up to ${opts.concurrency} at a time)` : ''} — Ctrl-C to quit`)
  if (!noFilters(opts.filters)) {
    const f = opts.filters
    const parts = [
      f.methods.size && `method ${[...f.methods].join(' or ')}`,
      f.paths.length && `path ${f.paths.map((p) => p.source).join(' or ')}`,
      ...f.headers.map((h) => `header ${h.source}`),
    ].filter(Boolean)
    say(paint('dim', `Only captures with ${parts.join(' and ')}; the others are skipped`))
  }
  const plural = (n: number) => `${n} capture${n === 1 ? '' : 's'}`
  if (opts.replayLast) {
    say(paint('dim', `Replaying the last ${plural(newest.length)}`))
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
      say(missed.length ? paint(['yellow', 'bold'], `Catching up on ${plural(missed.length)} ${what}`) : paint('dim', `Nothing to catch up on: no captures ${what}`))
      for (const c of missed) enqueue(c)
    } else if (opts.resume) {
      say(paint('dim', `First run for this endpoint and target: starting with new captures (remembered in ${opts.stateFile})`))
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
    // Other events (forward attempts, the endpoint's settings…) are the page's business, not ours.
    let deleted = false
    const onEvent = (ev: EventSourceMessage) => {
      if (ev.event === 'capture') enqueue(JSON.parse(ev.data) as Capture)
      else if (ev.event === 'endpoint_deleted') deleted = true
    }
    const resumeFrom = lastId
    let reason = 'the server closed the stream'
    try {
      kick()
      const s = openStream({ api, token, key, lastEventId: resumeFrom, signal: ac.signal, onEvent, onActivity: kick })
      s.ended.catch(() => undefined) // awaited below once opened; a refused connection rejects both
      await s.opened
      if (connectedOnce) say(`${paint(['green', 'bold'], '✔ Reconnected')} — catching up on captures after #${resumeFrom}`)
      else say(`${paint('green', 'Ready.')} Waiting for requests…`)
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
    // The stream ended because the endpoint is gone: reconnecting would only meet a 404.
    if (deleted) fail(1, `endpoint ${token} was deleted (in the console or through the API): nothing more will arrive`)
    const wait = BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)]!
    if (failures === 0) {
      say(`${paint(['red', 'bold', 'inverse'], ' CONNECTION LOST ')} ${paint('red', `to ${api} (${reason}). Captures are kept by the service; reconnecting…`)}`)
    }
    failures++
    await new Promise((r) => setTimeout(r, wait))
  }
}

main().catch((err) => fail(1, (err as Error).stack ?? String(err)))
