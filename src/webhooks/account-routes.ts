// The account's own API key: POST /account/key/rotate replaces it (docs/webhooks.md, "Console
// support"). Plan, limits and usage are GET /account (endpoint-routes.ts); upgrades are /checkout.
import Router from '@koa/router'
import { ROTATE_RACE, ROTATED_MESSAGE, rotateApiKey } from '../platform/accounts.ts'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { conflict } from '../platform/http/errors.ts'
import { describedAs } from '../platform/ops/openapi.ts'
import type { Platform } from '../platform/platform.ts'

const ROTATE_OPENAPI = {
  summary: 'Replace the API key',
  description: 'Returns a new key, once; the key used for this request stops working (at once on this server, within a second on the others). Of two rotations with the same key, the second gets 409.',
  responses: {
    '200': {
      description: 'The new key',
      content: { 'application/json': { schema: { type: 'object', properties: { api_key: { type: 'string' }, message: { type: 'string' } }, required: ['api_key'] } } },
    },
  },
}

export function webhooksAccountRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1' })
  router.post('/account/key/rotate', describedAs(ROTATE_OPENAPI), requireApiKey(platform, 'webhooks'), async (ctx) => {
    const apiKey = await rotateApiKey(platform.db, accountOf(ctx))
    if (!apiKey) throw conflict(ROTATE_RACE)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { api_key: apiKey, message: ROTATED_MESSAGE }
  })
  return router
}
