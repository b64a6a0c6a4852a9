// The evaluation API: POST /api/v1/evaluate (several flags, with context) and
// GET /api/v1/evaluate/{flag_key}?sdk_key= (one flag, no context). Served from the in-memory
// flag cache: no database read once a project is cached.
import { countServed } from './usage-counter.ts'
import Router from '@koa/router'
import type { HotContext } from '../../platform/http/hot-route.ts'
import { endSoon } from '../../platform/http/end-soon.ts'
import { notFound } from '../../platform/http/errors.ts'
import { input, parseOrThrow, validate, withSchema } from '../../platform/http/validate.ts'
import type { FlagCache, ProjectSnapshot, SdkKeyEntry } from './flag-cache.ts'
import { EMPTY_CONTEXT, inPlaceContext, NOT_FOUND, type CompiledFlag, type Evaluation } from '../engine/rules.ts'
import type { EvaluationGate } from './sdk-auth.ts'
import { metrics } from '../../platform/ops/metrics.ts'
import { ANY_ORIGIN_POLICY, corsByProject, pushCorsHead } from './evaluation-cors.ts'
import { checkEvaluateBody, evaluateBodySchema, evaluateOneSchema, evaluateSchema, type EvaluateBody } from './evaluate-schema.ts'

export const FLAG_NOT_FOUND_MESSAGE = 'Flag not found'

/** A project deleted between key lookup and load serves nothing, like an empty project. */
export const EMPTY_SNAPSHOT: ProjectSnapshot = { projectId: '', environment: 'production', version: -1, tag: '', byKey: new Map(), all: [], segments: [], origins: ANY_ORIGIN_POLICY }

// Each result's piece of the answer (`,"key":{"value":…}`) is built once. compileFlag makes every
// result a frozen object of its own flag, so a result names its key; NOT_FOUND, shared by every
// unknown key, is written per key.
const pieces = new WeakMap<Evaluation, string>()
const NOT_FOUND_JSON = JSON.stringify({ value: NOT_FOUND.value, reason: NOT_FOUND.reason, rule_index: NOT_FOUND.rule_index })
function piece(f: CompiledFlag, r: Evaluation): string {
  let s = pieces.get(r)
  if (s === undefined) pieces.set(r, (s = `,${f.keyJson}:${JSON.stringify(nativeResult(r))}`))
  return s
}

/** A result as the native API answers it: `variant` only when a weighted split served the value. */
function nativeResult(r: Evaluation) {
  const out: { value: unknown; reason: string; rule_index: number | null; variant?: string } = { value: r.value, reason: r.reason, rule_index: r.rule_index }
  if (r.variant !== undefined) out.variant = r.variant
  return out
}

/** Writes the answer of a valid evaluate body from a project's snapshot. */
function answer(ctx: HotContext, body: EvaluateBody, snap: ProjectSnapshot): void {
  // The parsed body's context is read in place (engine/context.ts): a plain object of JSON values.
  const context = body.context ? inPlaceContext(body.context) : EMPTY_CONTEXT
  // The answer is written by hand from each result's memoised piece: on a request of ten flags,
  // building and stringifying a fresh object cost as much as evaluating.
  let json = '{"flags":{'
  const keys = body.flags ?? snap.all.map((f) => f.key)
  const n = keys.length
  // A key asked for twice is answered once, as an object would hold it. Short lists (the usual
  // ones) look back instead of building a Set: among the flags served so far, comparing objects,
  // or for an unknown key among the keys before it.
  const seen = n > 16 ? new Set<string>() : undefined
  const served: CompiledFlag[] = []
  for (let i = 0; i < n; i++) {
    const key = keys[i]!
    if (seen) {
      if (seen.has(key)) continue
      seen.add(key)
    }
    const f = snap.byKey.get(key)
    if (!seen && (f ? served.includes(f) : i > 0 && keys.lastIndexOf(key, i - 1) !== -1)) continue
    let p: string
    if (f) {
      if (!seen) served.push(f)
      const r = f.evaluate(context)
      p = piece(f, r)
      metrics.evaluation(r.reason)
      countServed(snap.projectId, snap.environment, f.key, r)
    } else {
      p = `,${JSON.stringify(key)}:${NOT_FOUND_JSON}`
      metrics.evaluation('FLAG_NOT_FOUND')
    }
    json += i === 0 ? p.slice(1) : p
  }
  json += '}}'
  // Written straight to the response (Koa's own response step costs more than the evaluation),
  // with the other answers of this event-loop turn (end-soon.ts); headers set earlier (X-Request-Id) are kept.
  ctx.respond = false
  const head = ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(json))]
  // The general stack has set X-Request-Id on the response already; a hot route has not.
  if (!ctx.res.hasHeader('X-Request-Id')) head.push('X-Request-Id', ctx.state.reqId)
  const origin = ctx.req.headers.origin
  if (origin !== undefined) pushCorsHead(head, origin, snap.origins)
  ctx.res.writeHead(200, head)
  endSoon(ctx.res, json)
}

/**
 * POST /api/v1/evaluate with its JSON body in ctx.request.body. The body is checked by hand
 * (checkEvaluateBody accepts exactly what the schema accepts; anything else gets the schema's own
 * error message). Shared by the route and the fast path. A known key with a leased point left and
 * a cached project (the usual request) is answered synchronously, without a promise.
 */
export function evaluateHandler(cache: FlagCache, gate: EvaluationGate): (ctx: HotContext) => Promise<void> | void {
  const validBody = (raw: unknown) => checkEvaluateBody(raw) ?? parseOrThrow(evaluateBodySchema, raw ?? {})
  const answerValid = (ctx: HotContext, raw: unknown, snap: ProjectSnapshot) => {
    let body: EvaluateBody
    try {
      body = validBody(raw)
    } catch (err) {
      // The project is known by now: its allowed origins decide who may read the error too.
      corsByProject(ctx, snap.origins)
      throw err
    }
    answer(ctx, body, snap)
  }
  const slow = async (ctx: HotContext, sdkKey: unknown, admitted: SdkKeyEntry | undefined) => {
    const sdk = admitted ?? (await gate.admit(sdkKey))
    answerValid(ctx, ctx.request.body, (await cache.snapshot(sdk.projectId)) ?? EMPTY_SNAPSHOT)
  }
  // Both paths authenticate before validating, so that a caller without a key learns nothing else.
  return (ctx) => {
    const raw = ctx.request.body as { sdk_key?: unknown } | undefined
    const sdkKey = raw && typeof raw === 'object' ? raw.sdk_key : undefined
    const sdk = gate.admitNow(sdkKey)
    const snap = sdk && cache.heldSnapshot(sdk.projectId)
    if (!snap) return slow(ctx, sdkKey, sdk)
    answerValid(ctx, raw, snap)
  }
}

export function evaluateRouter(cache: FlagCache, gate: EvaluationGate): Router {
  const admit = gate.admit
  const router = new Router({ prefix: '/api/v1' })

  // Bodies the fast path (evaluate-fast-path.ts) leaves to the general stack arrive here:
  // compressed ones, and any other media type (which requireJson has answered 415 by then).
  router.post('/evaluate', withSchema(evaluateHandler(cache, gate), evaluateSchema))

  router.get('/evaluate/:flag_key', validate(evaluateOneSchema), async (ctx) => {
    const { params, query } = input(ctx, evaluateOneSchema)
    const sdk = await admit(query.sdk_key)
    const snap = (await cache.snapshot(sdk.projectId)) ?? EMPTY_SNAPSHOT
    corsByProject(ctx, snap.origins)
    const f = snap.byKey.get(params.flag_key)
    if (!f) {
      metrics.evaluation('FLAG_NOT_FOUND')
      throw notFound(FLAG_NOT_FOUND_MESSAGE)
    }
    const r = f.evaluate(EMPTY_CONTEXT)
    metrics.evaluation(r.reason)
    countServed(snap.projectId, snap.environment, f.key, r)
    ctx.body = { key: f.key, ...nativeResult(r) }
  })

  return router
}
