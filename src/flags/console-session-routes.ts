// The web console's sign-in (docs/flags-console-api.md): POST /api/v1/console/session exchanges an API key for a session cookie (HttpOnly,
// SameSite=Strict) and a CSRF token; GET answers who is signed in (and the token again, after a
// reload); DELETE signs out. POST /api/v1/account/key/rotate replaces the account's API key,
// which ends every console session made with the old one. Session creation is rate limited per
// client IP (guessing keys through it costs as much as through any other route, and no more).
import Router from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import { findAccountByKey, ROTATE_RACE, ROTATED_MESSAGE, rotateApiKey, type Account } from '../platform/accounts.ts'
import { FLAGS_LIMITS } from '../platform/plans.ts'
import { accountOf, requireApiKey, UNAUTHORIZED } from '../platform/http/auth.ts'
import {
  checkCsrf,
  clearSessionCookie,
  createSession,
  deleteSession,
  findSession,
  sessionIdOf,
  sessionRefused,
  setSessionCookie,
  type ConsoleSessionDoc,
} from '../platform/http/console-session.ts'
import { conflict, unauthorized } from '../platform/http/errors.ts'
import { createLimiter } from '../platform/http/rate-limit.ts'
import { input, validate } from '../platform/http/validate.ts'
import type { Platform } from '../platform/platform.ts'
import { describedAs } from '../platform/ops/openapi.ts'

/** Session creations per client IP per minute. */
export const SESSION_CREATES_PER_MINUTE = 20

export const createSessionSchema = z.object({
  body: z.strictObject({
    api_key: z.string({ error: (i) => (i.input === undefined ? 'api_key is required' : 'api_key must be a string') }).min(1, { error: 'api_key must not be empty' }).max(200, { error: 'api_key must be at most 200 characters' }),
  }),
})

const json = (schema: Record<string, unknown>, description: string) => ({ description, content: { 'application/json': { schema } } })
const errorRef = { $ref: '#/components/schemas/Error' }
const sessionBody = {
  type: 'object',
  properties: {
    account: { type: 'object', properties: { id: { type: 'string' }, email: { type: 'string' }, plan: { type: 'string' } }, required: ['id', 'email', 'plan'] },
    csrf_token: { type: 'string', description: 'Send it in X-CSRF-Token with every POST, PUT, PATCH and DELETE made with the cookie.' },
    expires_at: { type: 'string', format: 'date-time' },
  },
  required: ['account', 'csrf_token', 'expires_at'],
}

function sessionView(account: Account, s: ConsoleSessionDoc) {
  return { account: { id: account._id, email: account.email, plan: account.plan }, csrf_token: s.csrf_token, expires_at: s.expires_at.toISOString() }
}

export function consoleSessionRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1' })
  const db = platform.db
  const limiter = createLimiter(platform.redis, {
    name: 'console-session',
    points: SESSION_CREATES_PER_MINUTE,
    durationSec: 60,
    message: 'Too many sign-in attempts from this address; retry later',
    namespace: platform.config.QUEUE_PREFIX,
  })

  router.post(
    '/console/session',
    describedAs({
      summary: 'Sign in to the web console: exchange an API key for a session cookie',
      description: 'Sets the `qw_console` cookie (HttpOnly, SameSite=Strict, 12 h). Rate limited per client IP.',
      responses: { '200': json(sessionBody, 'Signed in; the cookie is set.'), '401': json(errorRef, 'Unknown API key.'), '429': json(errorRef, 'Too many attempts from this address.') },
    }),
    validate(createSessionSchema),
    async (ctx) => {
      await limiter.take(ctx.ip)
      const { body } = input(ctx, createSessionSchema)
      const account = await findAccountByKey(db, 'flags', body.api_key)
      if (!account) throw unauthorized(UNAUTHORIZED)
      // Signing in again from the same browser replaces the session the cookie names.
      const old = sessionIdOf(ctx)
      if (old) await deleteSession(db, old)
      const { id, doc } = await createSession(db, account, body.api_key)
      setSessionCookie(ctx, id)
      ctx.set('Cache-Control', 'no-store')
      ctx.body = sessionView(account, doc)
    },
  )

  router.get(
    '/console/session',
    describedAs({
      summary: 'The signed-in console session (and its CSRF token)',
      responses: { '200': json(sessionBody, 'Signed in.'), '401': json(errorRef, '`Not signed in`, or `Your session ended: the API key was revoked`.') },
    }),
    async (ctx) => {
      const sid = sessionIdOf(ctx)
      const found = sid ? await findSession(db, 'flags', sid) : ({ ok: false, reason: 'none' } as const)
      if (!found.ok) throw sessionRefused(ctx, found.reason === 'revoked' ? 'revoked' : 'none')
      ctx.set('Cache-Control', 'no-store')
      ctx.body = sessionView(found.account, found.session)
    },
  )

  // Signing out needs the CSRF token like any change made with the cookie (checked here, since
  // the route must also answer a cookie whose session is already gone).
  router.delete(
    '/console/session',
    describedAs({
      summary: 'Sign out of the web console',
      description: 'Ends the session and clears the cookie. With a live session, X-CSRF-Token is required; without one, the cookie is cleared all the same.',
      responses: { '204': { description: 'Signed out.' }, '403': json(errorRef, 'Missing or invalid CSRF token.') },
    }),
    async (ctx: Context) => {
      const sid = sessionIdOf(ctx)
      if (sid) {
        const found = await findSession(db, 'flags', sid)
        if (found.ok) {
          checkCsrf(ctx, found.session)
          await deleteSession(db, sid)
        }
      }
      clearSessionCookie(ctx)
      ctx.status = 204
    },
  )

  router.post(
    '/account/key/rotate',
    describedAs({
      summary: "Replace the account's API key",
      description: 'Answers the new key (shown once). The old key stops working at once on this replica and within about 1 s on the others; every console session made with it ends.',
      responses: { '200': json({ type: 'object', properties: { api_key: { type: 'string' } }, required: ['api_key'] }, 'The new key.') },
    }),
    requireApiKey(platform, 'flags'),
    async (ctx) => {
      const account = accountOf(ctx)
      const apiKey = await rotateApiKey(db, account)
      if (!apiKey) throw conflict(ROTATE_RACE)
      // Sessions made with the old key end at their next request, which says why (console-session.ts).
      ctx.set('Cache-Control', 'no-store')
      ctx.body = { api_key: apiKey, message: ROTATED_MESSAGE, plan: account.plan, limits: { ...FLAGS_LIMITS[account.plan] } }
    },
  )

  return router
}
