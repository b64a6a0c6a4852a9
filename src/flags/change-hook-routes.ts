// Flag-change webhooks of a project: GET/POST /api/v1/projects/{id}/webhooks, GET/PATCH/PUT/DELETE
// …/webhooks/{webhook}, the delivery log (…/{webhook}/deliveries[/{delivery}]) and a manual retry
// (POST …/deliveries/{delivery}/retry), and a new signing secret (POST …/{webhook}/secret/rotate).
// The signing secret is returned once, at creation and at each rotation. Changes of webhooks
// (a rotation too: the secret's hint changes) are recorded in the project's history like every
// other change.
import Router from '@koa/router'
import type { Context } from 'koa'
import { accountOf, requireApiKey } from '../platform/http/auth.ts'
import { badRequest, conflict, notFound } from '../platform/http/errors.ts'
import { input, validate } from '../platform/http/validate.ts'
import { enqueueDurably } from '../platform/queue/outbox.ts'
import { checkOutboundUrl } from '../platform/outbound/outbound-url.ts'
import { randomId } from '../platform/ids.ts'
import type { Platform } from '../platform/platform.ts'
import { sealSecret } from '../platform/secret-box.ts'
import { newWebhookSecret } from '../platform/outbound/signed-webhook.ts'
import { recordChange } from './changes/audit.ts'
import { webhookState } from './changes/change-state.ts'
import { deleteDeliveriesOf, deliveryView, getDelivery, listDeliveries, reopenDelivery } from './changes/change-hook-delivery-store.ts'
import { flagWebhookDeliverContract } from './job-contracts.ts'
import { WEBHOOK_LIMITS, webhookLimit } from './plan-limits.ts'
import { environmentNames, PRODUCTION, type ProjectDoc } from './store/project-store.ts'
import { ownProject } from './own-project.ts'
import { projectPathSchema } from './flag-schema.ts'
import { createWebhookSchema, deliveryPathSchema, listDeliveriesSchema, rotateSecretSchema, updateWebhookSchema, webhookPathSchema } from './change-hook-schema.ts'
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, replaceWebhookSecret, updateWebhook, webhookView } from './changes/change-hook-store.ts'
import { describedAs } from '../platform/ops/openapi.ts'

export const WEBHOOK_NOT_FOUND = 'Webhook not found'

const hintOf = (secret: string) => `${secret.slice(0, 10)}…`

const ROTATE_OPENAPI = describedAs({
  summary: "Replace the webhook's signing secret",
  description:
    'Returns the new secret, once (as creation does). The old secret signs nothing from then on: the next delivery, and every retry of a pending one, is signed with the new secret only. Recorded in the history as a webhook update of `secret_hint`.',
  responses: {
    '200': {
      description: 'The webhook, with the new `secret` (shown only in this answer)',
      content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, secret: { type: 'string' }, secret_hint: { type: 'string' } }, required: ['id', 'secret', 'secret_hint'] } } },
    },
  },
})
export const DELIVERY_NOT_FOUND = 'Delivery not found'

export function changeHooksRouter(platform: Platform): Router {
  const router = new Router({ prefix: '/api/v1/projects/:id/webhooks' })
  const { db, config } = platform
  const auth = requireApiKey(platform, 'flags')

  const ownWebhook = async (p: ProjectDoc, id: string) => {
    const h = await getWebhook(db, p._id, id)
    if (!h) throw notFound(WEBHOOK_NOT_FOUND)
    return h
  }
  const checkEnvironment = (p: ProjectDoc, name: string) => {
    if (!environmentNames(p).includes(name)) throw badRequest(`environment is not an environment of this project ("${name}")`)
    return name
  }

  router.get('/', auth, validate(projectPathSchema), async (ctx) => {
    const { params } = input(ctx, projectPathSchema)
    const p = await ownProject(db, ctx, params.id)
    ctx.body = { webhooks: (await listWebhooks(db, p._id)).map(webhookView) }
  })

  router.post('/', auth, validate(createWebhookSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { params, body } = input(ctx, createWebhookSchema)
    const p = await ownProject(db, ctx, params.id)
    const url = checkOutboundUrl('url', body.url, config.outboundAllowPrivate)
    const environment = checkEnvironment(p, body.environment ?? PRODUCTION)
    const secret = newWebhookSecret()
    const id = randomId()
    const fields = {
      _id: id,
      url,
      environment,
      events: body.events ?? null,
      description: body.description ?? '',
      enabled: body.enabled ?? true,
      secret_sealed: await sealSecret(platform, secret),
      secret_hint: hintOf(secret),
    }
    const h = await recordChange(platform, ctx, { project_id: p._id, kind: 'webhook', target: id }, () => createWebhook(db, p._id, account._id, fields, WEBHOOK_LIMITS[account.plan]), webhookState)
    if (!h) throw webhookLimit(account.plan)
    ctx.status = 201
    ctx.body = { ...webhookView(h), secret }
  })

  router.get('/:webhook', auth, validate(webhookPathSchema), async (ctx) => {
    const { params } = input(ctx, webhookPathSchema)
    const p = await ownProject(db, ctx, params.id)
    ctx.body = webhookView(await ownWebhook(p, params.webhook))
  })

  const update = async (ctx: Context) => {
    const { params, body } = input(ctx, updateWebhookSchema)
    const p = await ownProject(db, ctx, params.id)
    await ownWebhook(p, params.webhook)
    const change = {
      ...body,
      url: body.url === undefined ? undefined : checkOutboundUrl('url', body.url, config.outboundAllowPrivate),
      environment: body.environment === undefined ? undefined : checkEnvironment(p, body.environment),
    }
    const h = await recordChange(platform, ctx, { project_id: p._id, kind: 'webhook', target: params.webhook }, () => updateWebhook(db, p._id, params.webhook, change), (h) => (h ? webhookState(h) : undefined))
    if (!h) throw notFound(WEBHOOK_NOT_FOUND)
    ctx.body = webhookView(h)
  }
  router.patch('/:webhook', auth, validate(updateWebhookSchema), update)
  router.put('/:webhook', auth, validate(updateWebhookSchema), update)

  router.delete('/:webhook', auth, validate(webhookPathSchema), async (ctx) => {
    const { params } = input(ctx, webhookPathSchema)
    const p = await ownProject(db, ctx, params.id)
    const gone = await recordChange(platform, ctx, { project_id: p._id, kind: 'webhook', target: params.webhook }, () => deleteWebhook(db, p._id, params.webhook), (ok) => (ok ? null : undefined))
    if (!gone) throw notFound(WEBHOOK_NOT_FOUND)
    await deleteDeliveriesOf(db, params.webhook)
    ctx.status = 204
  })

  // No overlap: the old secret stops signing at once (a rotation is mostly made because it leaked);
  // deliveries a receiver refuses while it switches are retried (docs/flags.md, "Secret").
  router.post('/:webhook/secret/rotate', ROTATE_OPENAPI, auth, validate(rotateSecretSchema), async (ctx) => {
    const { params } = input(ctx, rotateSecretSchema)
    const p = await ownProject(db, ctx, params.id)
    const old = await ownWebhook(p, params.webhook)
    // A hint that differs from the old one, so the two can be told apart (and the history sees a change).
    let secret = newWebhookSecret()
    while (hintOf(secret) === old.secret_hint) secret = newWebhookSecret()
    const sealed = { secret_sealed: await sealSecret(platform, secret), secret_hint: hintOf(secret) }
    const rotate = () => replaceWebhookSecret(db, p._id, params.webhook, sealed)
    const h = await recordChange(platform, ctx, { project_id: p._id, kind: 'webhook', target: params.webhook }, rotate, (h) => (h ? webhookState(h) : undefined))
    if (!h) throw notFound(WEBHOOK_NOT_FOUND)
    ctx.set('Cache-Control', 'no-store')
    ctx.body = { ...webhookView(h), secret }
  })

  router.get('/:webhook/deliveries', auth, validate(listDeliveriesSchema), async (ctx) => {
    const { params, query } = input(ctx, listDeliveriesSchema)
    const p = await ownProject(db, ctx, params.id)
    const h = await ownWebhook(p, params.webhook)
    const docs = await listDeliveries(db, h._id, query)
    ctx.body = {
      deliveries: docs.map((d) => deliveryView(d, false)),
      // Older pages: pass next_before as `before`; null when this page is the last.
      next_before: docs.length === query.limit ? docs.at(-1)!._id : null,
    }
  })

  const ownDelivery = async (ctx: Context) => {
    const { params } = input(ctx, deliveryPathSchema)
    const p = await ownProject(db, ctx, params.id)
    const h = await ownWebhook(p, params.webhook)
    const d = await getDelivery(db, h._id, params.delivery)
    if (!d) throw notFound(DELIVERY_NOT_FOUND)
    return d
  }

  router.get('/:webhook/deliveries/:delivery', auth, validate(deliveryPathSchema), async (ctx) => {
    ctx.body = deliveryView(await ownDelivery(ctx))
  })

  // A manual retry sends the same message again (same webhook-id, fresh timestamp and signature),
  // with the automatic schedule behind it; a delivery still being retried is a 409.
  router.post('/:webhook/deliveries/:delivery/retry', auth, validate(deliveryPathSchema), async (ctx) => {
    const d = await ownDelivery(ctx)
    const n = await reopenDelivery(db, d)
    if (n === null) throw conflict('This delivery is still being attempted; retry it once it has failed or been delivered')
    await enqueueDurably(platform, flagWebhookDeliverContract, { delivery_id: d._id, webhook_id: d.webhook_id, manual: true }, { jobId: `${d._id}-retry${n}` })
    ctx.status = 202
    ctx.body = deliveryView((await getDelivery(db, d.webhook_id, d._id))!)
  })

  return router
}
