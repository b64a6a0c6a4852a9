// Bearer API-key authentication. Unknown, malformed and other services' keys are all the same 401.
import type { Context, Next } from 'koa'
import { findAccountByKey, type Account } from '../accounts.ts'
import type { Service } from '../plans.ts'
import type { Platform } from '../platform.ts'
import { unauthorized } from './errors.ts'

export const UNAUTHORIZED = 'Unauthorized: invalid or missing API key'

export function bearerToken(ctx: Context): string | null {
  const h = ctx.get('authorization')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h)
  return m ? m[1]! : null
}

export function requireApiKey(platform: Platform, service: Service) {
  return async (ctx: Context, next: Next) => {
    const token = bearerToken(ctx)
    const account = token ? await findAccountByKey(platform.db, service, token, { cached: true }) : null
    if (!account) throw unauthorized(UNAUTHORIZED)
    ctx.state.account = account
    await next()
  }
}

export function accountOf(ctx: Context): Account {
  return ctx.state.account as Account
}
