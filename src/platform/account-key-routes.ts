// POST /api/v1/account/key/rotate, the same in every service: the account's API key replaced by a
// new one, shown once. The key used for the request stops working at once on this replica and
// within ACCOUNT_CACHE_MS on the others, and every console session made with it ends; of two
// rotations sent with the same key, the second gets 409 (docs/configuration.md, "Errors").
import Router from '@koa/router'
import { ROTATE_RACE, ROTATED_MESSAGE, rotateApiKey, type Account } from './accounts.ts'
import { accountOf, requireApiKey } from './http/auth.ts'
import { conflict } from './http/errors.ts'
import { describedAs } from './ops/openapi.ts'
import type { Service } from './plans.ts'
import type { Platform } from './platform.ts'

const ROTATE_OPENAPI = {
  summary: 'Replace the API key',
  description:
    'Returns a new key, once; the key used for this request stops working (at once on this server, within a second on the others) and every console session made with it ends. Of two rotations with the same key, the second gets 409.',
  responses: {
    '200': {
      description: 'The new key',
      content: { 'application/json': { schema: { type: 'object', properties: { api_key: { type: 'string' }, message: { type: 'string' } }, required: ['api_key', 'message'] } } },
    },
  },
}

/** `extra` adds service-specific fields to the answer (the flags service: plan and limits). */
export function accountKeyRouter(platform: Platform, service: Service, extra: (account: Account) => Record<string, unknown> = () => ({})): Router {
  const router = new Router({ prefix: '/api/v1' })
  router.post('/account/key/rotate', describedAs(ROTATE_OPENAPI), requireApiKey(platform, service), async (ctx) => {
    const account = accountOf(ctx)
    const apiKey = await rotateApiKey(platform.db, account)
    if (!apiKey) throw conflict(ROTATE_RACE)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { api_key: apiKey, message: ROTATED_MESSAGE, ...extra(account) }
  })
  return router
}
