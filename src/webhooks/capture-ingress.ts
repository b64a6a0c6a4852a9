// ANY /hook/<token>[/sub/path][?query]: no auth. Stores the request byte-exact (body read raw,
// up to 25 MiB; larger → 413), counts it against the account's UTC-day limit atomically (past
// it → 429, nothing stored), acknowledges only after it is stored, then answers with the
// endpoint's configured response. Forwarding is a job, enqueued durably; nothing slow runs here.
// Open live streams hear of each capture through Redis (live-hub.ts).
import type { Context, Next } from 'koa'
import { readRawBody } from '../platform/http/raw-body.ts'
import { scheduleForward } from './forward/forward-schedule.ts'
import { getAccount } from '../platform/accounts.ts'
import { WEBHOOKS_LIMITS } from '../platform/plans.ts'
import { clock } from '../platform/clock.ts'
import type { Account } from '../platform/accounts.ts'
import { groupInserter, type GroupInsert } from '../platform/store/group-insert.ts'
import { groupLine } from '../platform/store/group-line.ts'
import { dayKey } from '../platform/clock.ts'
import { isDuplicateKey } from '../platform/store/mongo.ts'
import { HttpError, notFound, tooMany } from '../platform/http/errors.ts'
import { documented } from '../platform/ops/openapi.ts'
import type { Platform } from '../platform/platform.ts'
import { putBody } from './store/body-store.ts'
import { searchText } from './search/search.ts'
import { CAPTURE_OPERATIONS } from './capture-openapi.ts'
import { captureCollection, captureKey, type CaptureDoc } from './store/capture-store.ts'
import { endpoints, isExpired, takeRequestId, takeRequestIds, uncountCapture, type EndpointDoc } from './store/endpoint-store.ts'
import { liveCapture, publishLive } from './live/live-hub.ts'
import { releaseDailyRequest, takeDailyRequests } from './store/limit-store.ts'
import { secondsToNextUtcDay } from './store/time.ts'
import { ENDPOINT_NOT_FOUND } from './own-endpoint.ts'
import { protectUntrusted } from './untrusted-response.ts'

export const MAX_CAPTURE_BYTES = 25 * 1024 * 1024
const HOOK_PATH = /^\/hook\/([0-9A-Za-z]{1,64})(\/.*)?$/
const CAPTURED = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
const ALLOW = [...CAPTURED, 'HEAD', 'OPTIONS'].join(', ')

export const dailyLimitMessage = (plan: string, limit: number) =>
  `Daily request limit reached: the ${plan} plan allows ${limit.toLocaleString('en-US')} captured requests per day (UTC). Upgrade your plan to capture more.`

/** Header object with lower-cased names; repeated headers joined as HTTP allows. */
function lowerHeaders(raw: string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase()
    out[k] = k in out ? `${out[k]}, ${raw[i + 1]}` : raw[i + 1]!
  }
  return out
}

function respond(ctx: Context, ep: EndpointDoc): void {
  ctx.status = ep.response_code
  ctx.set('Access-Control-Allow-Origin', '*')
  ctx.set('Cache-Control', 'no-store')
  if (ctx.status === 204 || ctx.status === 304) return
  ctx.set('Content-Type', ep.response_content_type)
  ctx.body = Buffer.from(ep.response_body, 'utf8')
}

export function captureMiddleware(platform: Platform) {
  const { db } = platform
  // Captures arrive by the hundred per second on busy endpoints: their inserts are group-committed,
  // one line per slot of the partitioned collection (each slot is its own collection).
  const inserters = new Map<string, GroupInsert<CaptureDoc>>()
  const insertCapture = (doc: CaptureDoc) => {
    const coll = captureCollection(db, doc.endpoint_id, doc.id)
    let ins = inserters.get(coll.collectionName)
    if (!ins) inserters.set(coll.collectionName, (ins = groupInserter(coll)))
    return ins(doc)
  }
  // The three small writes and reads before the insert are group-committed too (group-line.ts):
  // concurrent captures of one endpoint take consecutive request ids in one $inc, concurrent
  // captures of one account take their day-counter units in one $inc, and share one read of the
  // account (issued after they arrived, so none sees an account older than its request).
  // The same write counts them as the day's captures (the endpoints overview); one refused below gives its count back.
  const takeId = groupLine<null, { ep: EndpointDoc; day: string } | null>(async (token, items) => {
    const at = clock.now()
    const day = dayKey(at)
    const ep = await takeRequestIds(db, token, items.length, { day, at })
    return items.map((_, i) => (ep ? { ep: { ...ep, seq: ep.seq - items.length + 1 + i }, day } : null))
  })
  const readAccount = groupLine<null, Account | null>(async (id, items) => {
    const account = await getAccount(db, id)
    return items.map(() => account)
  })
  const takeDay = groupLine<{ accountId: string; now: Date; limit: number }, boolean>((_, items) =>
    takeDailyRequests(db, items[0]!.accountId, items[0]!.now, items[0]!.limit, items.length),
  )
  return documented(async (ctx: Context, next: Next) => {
    const m = HOOK_PATH.exec(ctx.path)
    if (!m) {
      if (ctx.path === '/hook' || ctx.path.startsWith('/hook/')) throw notFound(ENDPOINT_NOT_FOUND)
      return next()
    }
    const token = m[1]!
    ctx.state.route = '/hook/:token'
    // Set first, so error answers (404, 413, 429) carry it as well as the configured response.
    protectUntrusted(ctx)
    if (ctx.method === 'OPTIONS') {
      // Preflights of browser-sent test requests: answered, not stored.
      ctx.status = 204
      ctx.set('Allow', ALLOW)
      ctx.set('Access-Control-Allow-Origin', '*')
      ctx.set('Access-Control-Allow-Methods', ALLOW)
      ctx.set('Access-Control-Allow-Headers', ctx.get('access-control-request-headers') || '*')
      ctx.set('Access-Control-Max-Age', '600')
      return
    }
    if (ctx.method !== 'HEAD' && !CAPTURED.includes(ctx.method)) {
      throw new HttpError(405, 'Method not allowed', { Allow: ALLOW })
    }
    // HEAD (senders checking the URL exists) is answered like GET but not stored or counted.
    const taken = ctx.method === 'HEAD' ? null : await takeId(token, null)
    const ep = ctx.method === 'HEAD' ? await endpoints(db).findOne({ _id: token }) : (taken?.ep ?? null)
    const account = ep ? await readAccount(ep.account_id, null) : null
    if (!ep || !account || isExpired(ep, account)) throw notFound(ENDPOINT_NOT_FOUND)
    if (ctx.method === 'HEAD') return respond(ctx, ep)
    const uncount = () => uncountCapture(db, token, taken!.day)

    // Too large (413) or cut off: not stored, so not counted.
    const body = await readRawBody(ctx, MAX_CAPTURE_BYTES).catch(async (err: unknown) => {
      await uncount()
      throw err
    })
    const now = clock.now()
    const limits = WEBHOOKS_LIMITS[account.plan]
    const day = { accountId: account._id, now, limit: limits.requests_per_day }
    if (!(await takeDay(`${account._id}:${dayKey(now)}:${day.limit}`, day))) {
      await uncount()
      throw tooMany(dailyLimitMessage(account.plan, limits.requests_per_day), secondsToNextUtcDay(now))
    }
    let id = ep.seq
    const forwarding = Boolean(ep.forward_url && limits.forwarding)
    try {
      const stored = await putBody(db, captureKey(token, id), body)
      const text = searchText(body)
      const raw = ctx.req.rawHeaders
      const doc: CaptureDoc = {
        _id: captureKey(token, id),
        endpoint_id: token,
        account_id: account._id,
        id,
        method: ctx.method,
        path: ctx.path,
        sub_path: m[2] ?? '',
        query: ctx.querystring,
        headers: lowerHeaders(raw),
        raw_headers: [...raw],
        content_type: ctx.get('content-type') || null,
        ip_address: (ctx.ip || ctx.req.socket.remoteAddress || '').replace(/^::ffff:/, ''),
        size_bytes: body.length,
        received_at: now,
        expires_at: new Date(now.getTime() + limits.retention_hours * 3_600_000),
        ...stored,
        ...(text !== undefined ? { search_text: text } : {}),
        ...(forwarding
          ? { forward: { status: 'pending', round: 0, attempts: 0, last_status: null, last_error: null, next_attempt_at: null, delivered_at: null } }
          : {}),
      }
      for (let attempt = 1; ; attempt++) {
        try {
          await insertCapture(doc)
          break
        } catch (err) {
          // Two captures given the same id: MongoDB's findAndModify cannot do that, but the embedded
          // engine's can under load (it reads the incremented document back separately). Take the
          // next id; a skipped number is harmless, a lost capture is not.
          if (!isDuplicateKey(err) || attempt === 3) throw err
          const next = await takeRequestId(db, token)
          if (!next) throw err
          id = next.seq
          Object.assign(doc, { _id: captureKey(token, id), id })
        }
      }
      // Streams on every replica hear of it; not awaited, the sender's answer does not wait on Redis.
      void publishLive(platform, token, { type: 'capture', id, data: liveCapture(doc, body) })
    } catch (err) {
      await releaseDailyRequest(db, account._id, now)
      await uncount()
      throw err
    }
    if (forwarding) await scheduleForward(platform, { endpoint_id: token, request_id: id, round: 0, attempt: 1 }, 0)
    // The stored capture's id, so a sender (or `trigger`) can open what it just sent without a search.
    ctx.set('X-Capture-Id', String(id))
    respond(ctx, ep)
  }, CAPTURE_OPERATIONS)
}
