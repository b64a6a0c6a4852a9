// Browser sessions of the web consoles: an API key is exchanged once for a random session id held
// in an HttpOnly SameSite=Strict cookie, so page scripts never hold the key (nor any web storage).
// The id (≈190 bits) is stored only as its SHA-256 hash, with the account, the hash of the API key
// it was made with (never the key), a CSRF token and an expiry. With the cookie, a request that
// changes something must repeat the CSRF token in X-CSRF-Token (the console keeps it in memory and
// reads it again from GET …/console/session). A session ends when it expires, on sign-out, or
// when its API key is no longer the account's (rotated): then with SESSION_REVOKED.
import { timingSafeEqual } from 'node:crypto'
import type { Context } from 'koa'
import type { Db } from 'mongodb'
import { getAccount, type Account } from '../accounts.ts'
import { clock } from '../clock.ts'
import { base62, sha256 } from '../ids.ts'
import type { Service } from '../plans.ts'
import type { IndexSpec } from '../store/mongo.ts'
import { forbidden, HttpError } from './errors.ts'

/**
 * Cookies are shared by every port of a host, so each service's console has a cookie of its own:
 * signing in to the invoice console on localhost:3000 leaves the flags console on :3001 signed in.
 */
export const sessionCookie = (service: Service) => `qw_console_${service}`
export const SESSION_MAX_AGE_SEC = 12 * 3600
export const CSRF_HEADER = 'x-csrf-token'

export const NOT_SIGNED_IN = 'Not signed in'
export const SESSION_REVOKED = 'Your session ended: the API key was revoked'
export const CSRF_REFUSED = 'Missing or invalid CSRF token'

export interface ConsoleSessionDoc {
  /** SHA-256 of the session id the cookie holds. */
  _id: string
  service: Service
  account_id: string
  /** SHA-256 of the API key the session was made with: the account's own while that key is valid. */
  key_hash: string
  /** The key's prefix and first characters, for the audit history's actor. */
  key_hint: string
  csrf_token: string
  created_at: Date
  expires_at: Date
}

export const consoleSessionIndexes: IndexSpec = {
  collection: 'console_sessions',
  indexes: [
    { key: { account_id: 1 }, name: 'account' },
    // Expired sessions are removed by the store; every read checks the expiry as well.
    { key: { expires_at: 1 }, name: 'expiry', expireAfterSeconds: 0 },
  ],
}

const sessions = (db: Db) => db.collection<ConsoleSessionDoc>('console_sessions')

/** What an API key looks like in history and sessions: its prefix and four characters. */
export function keyHint(key: string): string {
  const prefix = /^[a-z]+_/.exec(key)?.[0] ?? ''
  return `${key.slice(0, prefix.length + 4)}…`
}

export async function createSession(db: Db, account: Account, apiKey: string): Promise<{ id: string; doc: ConsoleSessionDoc }> {
  const id = base62(32)
  const now = clock.now()
  const doc: ConsoleSessionDoc = {
    _id: sha256(id),
    service: account.service,
    account_id: account._id,
    key_hash: sha256(apiKey),
    key_hint: keyHint(apiKey),
    csrf_token: base62(32),
    created_at: now,
    expires_at: new Date(now.getTime() + SESSION_MAX_AGE_SEC * 1000),
  }
  await sessions(db).insertOne(doc)
  return { id, doc }
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await sessions(db).deleteOne({ _id: sha256(id) })
}

/** The session id the request's cookie carries, if it has one of a plausible shape. */
export function sessionIdOf(ctx: Context, service: Service): string | null {
  const header = ctx.get('cookie')
  if (!header) return null
  const name = sessionCookie(service)
  for (const part of header.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue
    const v = part.slice(eq + 1).trim()
    return /^[0-9A-Za-z]{32}$/.test(v) ? v : null
  }
  return null
}

export type SessionLookup =
  | { ok: true; session: ConsoleSessionDoc; account: Account }
  | { ok: false; reason: 'none' | 'revoked' | 'other_service' }

/**
 * The live session of the cookie for `service`: unknown and expired sessions are none; one whose
 * key is no longer the account's is revoked (and removed). A session of another service (its id
 * copied into this service's cookie) is told apart and left alone.
 */
export async function findSession(db: Db, service: Service, id: string): Promise<SessionLookup> {
  return findSessionByHash(db, service, sha256(id))
}

/** findSession by the stored hash of the id (a long-lived stream checks its session again). */
export async function findSessionByHash(db: Db, service: Service, hash: string): Promise<SessionLookup> {
  const s = await sessions(db).findOne({ _id: hash })
  if (s && s.service !== service) return { ok: false, reason: 'other_service' }
  if (!s || s.expires_at.getTime() <= clock.nowMs()) return { ok: false, reason: 'none' }
  const account = await getAccount(db, s.account_id)
  if (!account || account.key_hash !== s.key_hash) {
    await sessions(db).deleteOne({ _id: s._id })
    return { ok: false, reason: 'revoked' }
  }
  return { ok: true, session: s, account }
}

export function setSessionCookie(ctx: Context, service: Service, id: string): void {
  ctx.append('Set-Cookie', `${sessionCookie(service)}=${id}; Path=/; Max-Age=${SESSION_MAX_AGE_SEC}; HttpOnly; SameSite=Strict${ctx.secure ? '; Secure' : ''}`)
}

export function clearSessionCookie(ctx: Context, service: Service): void {
  ctx.append('Set-Cookie', `${sessionCookie(service)}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${ctx.secure ? '; Secure' : ''}`)
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** With the cookie, a request that changes something repeats the session's CSRF token in X-CSRF-Token. */
export function checkCsrf(ctx: Context, session: ConsoleSessionDoc): void {
  if (!UNSAFE.has(ctx.method)) return
  const given = Buffer.from(ctx.get(CSRF_HEADER))
  const want = Buffer.from(session.csrf_token)
  if (given.length !== want.length || !timingSafeEqual(given, want)) throw forbidden(CSRF_REFUSED)
}

/** The 401 of a request whose cookie names no live session (the cookie is cleared). */
export function sessionRefused(ctx: Context, service: Service, reason: 'none' | 'revoked' | 'other_service'): HttpError {
  clearSessionCookie(ctx, service)
  return new HttpError(401, reason === 'revoked' ? SESSION_REVOKED : NOT_SIGNED_IN, { 'WWW-Authenticate': 'Bearer' })
}
