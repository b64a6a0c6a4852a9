// The caller's endpoint for a management route: one answer for "not yours", "no such token" and
// "expired", so a token of another account cannot be told apart from one that does not exist.
import type { Context } from 'koa'
import type { Db } from 'mongodb'
import { accountOf } from '../platform/http/auth.ts'
import { notFound } from '../platform/http/errors.ts'
import { findOwnEndpoint, isExpired, type EndpointDoc } from './store/endpoint-store.ts'

export const ENDPOINT_NOT_FOUND = 'Endpoint not found'

/** The authenticated account's live endpoint `token`, or a 404 `Endpoint not found`. */
export async function ownEndpoint(db: Db, ctx: Context, token: string): Promise<EndpointDoc> {
  const account = accountOf(ctx)
  const ep = await findOwnEndpoint(db, account._id, token)
  if (!ep || isExpired(ep, account)) throw notFound(ENDPOINT_NOT_FOUND)
  return ep
}
