// POST /api/v1/flag-usage: in-process providers report how often they evaluated each flag, and to
// which variant, in batches (as Unleash SDKs send metrics). Server SDK keys only (a client-side
// key lives in web pages, where anyone could inflate the counts; pages evaluate on the service,
// which counts itself). Limits: at most MAX_USAGE_FLAGS flags per batch, MAX_USAGE_VARIANTS
// variants per flag, counts up to MAX_USAGE_COUNT each, a body of at most USAGE_BODY_LIMIT bytes.
// Flags the key's environment does not have, and variants a flag cannot serve, are not stored
// (they would let a client grow the data at will) and are named in the answer.
// The route reads its own body (app.ts lists USAGE_PATH among the raw paths): the app's JSON
// parser refuses any "__proto__" key, which is a flag key and a variant name the API accepts, and
// the batch's names are kept in Maps from the parse on, so no name is ever a property lookup.
import type { Db } from 'mongodb'
import Router from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import { readDecodedBody } from '../../platform/http/content-encoding.ts'
import { badRequest, forbidden, payloadTooLarge, unsupportedMediaType } from '../../platform/http/errors.ts'
import { atField, parseOrThrow } from '../../platform/http/validate.ts'
import type { CompiledFlag } from '../engine/rules.ts'
import { VARIANT_NAME_RE } from '../engine/variants.ts'
import { addUsage, type UsageRow } from '../store/usage-store.ts'
import type { FlagCache } from './flag-cache.ts'
import { sdkKeyOf, type Admit } from './sdk-auth.ts'
import { countInMetric } from './usage-counter.ts'

export const USAGE_PATH = '/api/v1/flag-usage'
export const MAX_USAGE_FLAGS = 1_000
export const MAX_USAGE_VARIANTS = 64
export const MAX_USAGE_COUNT = 1_000_000_000
export const USAGE_BODY_LIMIT = 256 * 1024

export const SERVER_KEY_NEEDED =
  'Forbidden: usage is reported with a server SDK key (fbsrv_…); client-side SDK keys (fbsdk_…) may only evaluate, and evaluations on the service are counted by the service'

/**
 * A JSON object as a Map of its own keys: JSON.parse makes "__proto__" an own key like any other,
 * and a Map keeps it one (zod's record drops it). Anything else is left for the schema to refuse.
 */
const entriesOf = (v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? new Map(Object.entries(v)) : v)
const objectExpected = { error: (i: { input: unknown }) => atField(i.input === undefined ? 'is required' : 'must be an object') }

const counts = z.preprocess(
  entriesOf,
  z
    .map(z.string().max(64), z.number().int().min(0).max(MAX_USAGE_COUNT), objectExpected)
    .refine((m) => m.size <= MAX_USAGE_VARIANTS, { message: `must have at most ${MAX_USAGE_VARIANTS} variants` }),
)
export const usageBody = z.strictObject({
  started_at: z.iso.datetime({ offset: true }).optional(),
  ended_at: z.iso.datetime({ offset: true }).optional(),
  flags: z.preprocess(
    entriesOf,
    z.map(z.string().max(128), counts, objectExpected).refine((m) => m.size <= MAX_USAGE_FLAGS, { message: `must have at most ${MAX_USAGE_FLAGS} flags` }),
  ),
})

/** Every variant name a flag can report: its splits' variants, `rule-<i>`, `default`, `disabled`. */
const servable = new WeakMap<CompiledFlag, Set<string>>()
function variantsOf(f: CompiledFlag): Set<string> {
  let s = servable.get(f)
  if (!s) {
    const d = f.definition
    s = new Set(['default', 'disabled', ...d.rules.map((_, i) => `rule-${i}`)])
    for (const r of d.rules) for (const v of r.variants ?? []) s.add(v.name)
    for (const v of d.fallthrough?.variants ?? []) s.add(v.name)
    servable.set(f, s)
  }
  return s
}

export function usageRouter(cache: FlagCache, admit: Admit, db: Db): Router {
  const router = new Router()

  router.post(USAGE_PATH, async (ctx: Context) => {
    const entry = await admit(sdkKeyOf(ctx), { 'WWW-Authenticate': 'Bearer' })
    if (!entry.server) throw forbidden(SERVER_KEY_NEEDED)
    const tooLarge = `A usage batch must be at most ${USAGE_BODY_LIMIT} bytes`
    if ((ctx.request.length ?? 0) > USAGE_BODY_LIMIT) throw payloadTooLarge(tooLarge)
    // As the app's parser answers: a body that is not JSON is a 415, an empty one no batch.
    const hasBody = (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== ''
    if (hasBody && !ctx.is('json')) throw unsupportedMediaType('Content-Type must be application/json')
    const text = hasBody ? (await readDecodedBody(ctx, USAGE_BODY_LIMIT, tooLarge)).toString('utf8').trim() : ''
    let json: unknown = {}
    try {
      if (text !== '') json = JSON.parse(text)
    } catch {
      throw badRequest('Malformed JSON body')
    }
    const body = parseOrThrow(usageBody, json)
    const snap = await cache.snapshot(entry.projectId)
    const rows: UsageRow[] = []
    const ignoredFlags: string[] = []
    const ignoredVariants: string[] = []
    let accepted = 0
    for (const [flag, variants] of body.flags) {
      const f = snap?.byKey.get(flag)
      if (!f) {
        ignoredFlags.push(flag)
        continue
      }
      const known = variantsOf(f)
      for (const [variant, n] of variants) {
        if (!VARIANT_NAME_RE.test(variant) || !known.has(variant)) {
          ignoredVariants.push(`${flag}/${variant}`)
          continue
        }
        if (n === 0) continue
        rows.push({ project: entry.project, environment: entry.environment, flag, variant, source: 'in_process', n })
        accepted += n
      }
    }
    await addUsage(db, rows, new Date())
    for (const r of rows) countInMetric('in_process', r.project, r.environment, r.flag, r.n)
    ctx.status = 202
    ctx.body = { accepted, ignored_flags: ignoredFlags.slice(0, 100), ignored_variants: ignoredVariants.slice(0, 100) }
  })

  return router
}
