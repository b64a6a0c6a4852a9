// Authentication of the management APIs: `Authorization: Bearer <API key>`, or the web console's
// session cookie (console-session.ts; with it, unsafe methods need the CSRF token). Unknown,
// malformed and other services' keys are all the same 401; a session whose key was rotated away
// is a 401 that says so. A request with both uses the Bearer key.
import type { Context, Next } from 'koa'
import { findAccountByKey, type Account } from '../accounts.ts'
import type { Service } from '../plans.ts'
import type { Platform } from '../platform.ts'
import { unauthorized } from './errors.ts'
import { checkCsrf, findSession, keyHint, sessionIdOf, sessionRefused } from './console-session.ts'

export const UNAUTHORIZED = 'Unauthorized: invalid or missing API key'

export function bearerToken(ctx: Context): string | null {
  const h = ctx.get('authorization')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  return m ? m[1]! : null
}

export function requireApiKey(platform: Platform, service: Service) {
  return async (ctx: Context, next: Next) => {
    const token = bearerToken(ctx)
    if (!token && ctx.get('authorization') === '') {
      const sid = sessionIdOf(ctx, service)
      if (sid) {
        const found = await findSession(platform.db, service, sid)
        if (found.ok) {
          checkCsrf(ctx, found.session)
          ctx.state.account = found.account
          ctx.state.keyHint = found.session.key_hint
          ctx.state.session = found.session
          return next()
        }
        if (found.reason !== 'other_service') throw sessionRefused(ctx, service, found.reason)
      }
    }
    const account = token ? await findAccountByKey(platform.db, service, token, { cached: true }) : null
    if (!account) throw unauthorized(UNAUTHORIZED)
    ctx.state.account = account
    ctx.state.keyHint = keyHint(token!)
    await next()
  }
}

export function accountOf(ctx: Context): Account {
  return ctx.state.account as Account
}

/** The hint of the API key the request was made with (its prefix and four characters). */
export function keyHintOf(ctx: Context): string {
  return (ctx.state.keyHint as string | undefined) ?? keyHint(bearerToken(ctx) ?? '')
}
