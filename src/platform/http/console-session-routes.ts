// A web console's sign-in, the same in every service (docs/flags-console-api.md, "Sessions"):
// POST /api/v1/console/session exchanges the service's API key for a session cookie (HttpOnly,
// SameSite=Strict) and a CSRF token; GET answers who is signed in (and the token again, after a
// reload); DELETE signs out. Rotating the API key (each service's POST /api/v1/account/key/rotate)
// ends every session made with the old one. Session creation is rate limited per client IP
// (guessing keys through it costs as much as through any other route, and no more).
import Router from '@koa/router'
import type { Context } from 'koa'
import { z } from 'zod'
import { findAccountByKey, type Account } from '../accounts.ts'
import type { Service } from '../plans.ts'
import { UNAUTHORIZED } from './auth.ts'
import {
  checkCsrf,
  clearSessionCookie,
  createSession,
  deleteSession,
  findSession,
  sessionCookie,
  sessionIdOf,
  sessionRefused,
  setSessionCookie,
  type ConsoleSessionDoc,
} from './console-session.ts'
import { unauthorized } from './errors.ts'
import { createLimiter } from './rate-limit.ts'
import { input, validate } from './validate.ts'
import type { Platform } from '../platform.ts'
import { describedAs } from '../ops/openapi.ts'

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

export function consoleSessionRouter(platform: Platform, service: Service): Router {
  const router = new Router({ prefix: '/api/v1' })
  const db = platform.db
  const limiter = createLimiter(platform.redis, {
    name: `console-session-${service}`,
    points: SESSION_CREATES_PER_MINUTE,
    durationSec: 60,
    message: 'Too many sign-in attempts from this address; retry later',
    namespace: platform.config.QUEUE_PREFIX,
  })

  router.post(
    '/console/session',
    describedAs({
      summary: 'Sign in to the web console: exchange an API key for a session cookie',
      description: `Sets the \`${sessionCookie(service)}\` cookie (HttpOnly, SameSite=Strict, 12 h). Rate limited per client IP.`,
      responses: { '200': json(sessionBody, 'Signed in; the cookie is set.'), '401': json(errorRef, 'Unknown API key.'), '429': json(errorRef, 'Too many attempts from this address.') },
    }),
    validate(createSessionSchema),
    async (ctx) => {
      await limiter.take(ctx.ip)
      const { body } = input(ctx, createSessionSchema)
      const account = await findAccountByKey(db, service, body.api_key)
      if (!account) throw unauthorized(UNAUTHORIZED)
      // Signing in again from the same browser replaces the session the cookie names.
      const old = sessionIdOf(ctx, service)
      if (old) await deleteSession(db, old)
      const { id, doc } = await createSession(db, account, body.api_key)
      setSessionCookie(ctx, service, id)
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
      const sid = sessionIdOf(ctx, service)
      const found = sid ? await findSession(db, service, sid) : ({ ok: false, reason: 'none' } as const)
      if (!found.ok) throw sessionRefused(ctx, service, found.reason === 'revoked' ? 'revoked' : 'none')
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
      const sid = sessionIdOf(ctx, service)
      if (sid) {
        const found = await findSession(db, service, sid)
        if (found.ok) {
          checkCsrf(ctx, found.session)
          await deleteSession(db, sid)
        }
      }
      clearSessionCookie(ctx, service)
      ctx.status = 204
    },
  )

  return router
}
