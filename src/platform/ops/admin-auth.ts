// The operator credential (ADMIN_TOKEN) for the queue dashboard and, when set, /metrics. Accepted
// as `Authorization: Bearer <token>` (curl, Prometheus) or HTTP Basic with the token as password
// (any user name), which browsers prompt for and then send with every dashboard request.
import type { Context } from 'koa'
import { timingSafeEqual } from 'node:crypto'
import { sha256 } from '../ids.ts'
import { unauthorized } from '../http/errors.ts'

export const ADMIN_UNAUTHORIZED = 'Unauthorized: admin token required'

function presented(ctx: Context): string | null {
  const h = ctx.get('authorization')
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(h)
  if (bearer) return bearer[1]!
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(h)
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8')
    const colon = decoded.indexOf(':')
    return colon >= 0 ? decoded.slice(colon + 1) : null
  }
  return null
}

/** Constant-time comparison of digests, so neither length nor prefix leaks through timing. */
export function isAdmin(ctx: Context, token: string): boolean {
  const given = presented(ctx)
  if (given === null) return false
  return timingSafeEqual(Buffer.from(sha256(given), 'hex'), Buffer.from(sha256(token), 'hex'))
}

export function requireAdmin(ctx: Context, token: string): void {
  if (!isAdmin(ctx, token)) {
    throw unauthorized(ADMIN_UNAUTHORIZED, 'Basic realm="queueworks admin", charset="UTF-8"')
  }
}
