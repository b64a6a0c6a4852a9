// Billing routes every service mounts: POST /api/v1/checkout (start a plan upgrade),
// POST /api/v1/billing/stripe-webhook (Stripe's events), and the pages Stripe sends the payer
// back to after paying or cancelling.
import Router from '@koa/router'
import type { Context } from 'koa'
import { accountOf, requireApiKey } from '../http/auth.ts'
import { conflict } from '../http/errors.ts'
import { input, validate } from '../http/validate.ts'
import type { Platform } from '../platform.ts'
import { createCheckout } from './checkout.ts'
import type { Service } from '../plans.ts'
import { checkoutSchema } from './billing-schema.ts'
import { WEBHOOK_PATH, stripeWebhook } from './stripe-webhook.ts'

const PUBLIC_URL = { invoice: 'INVOICE_PUBLIC_URL', flags: 'FLAGS_PUBLIC_URL', webhooks: 'WEBHOOKS_PUBLIC_URL' } as const

/** Host root the payer returns to: the configured public URL (without /api/v1), else this request's. */
function publicOrigin(platform: Platform, service: Service, ctx: Context): string {
  const configured = platform.config[PUBLIC_URL[service]]
  return (configured ?? `${ctx.protocol}://${ctx.host}`).replace(/\/+$/, '').replace(/\/api\/v1$/, '')
}

function page(ctx: Context, title: string, message: string) {
  ctx.type = 'html'
  ctx.set('Cache-Control', 'no-store')
  ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
    `<body style="font-family:system-ui,sans-serif;max-width:36em;margin:4em auto"><h1>${title}</h1><p id="status">${message}</p></body></html>`
}

/** Paths whose body billing reads itself (Stripe signs the exact bytes it sends). */
export const BILLING_RAW_PATHS = [WEBHOOK_PATH]

export function billingRouter(platform: Platform, service: Service): Router {
  const router = new Router()

  router.post('/api/v1/checkout', requireApiKey(platform, service), validate(checkoutSchema), async (ctx) => {
    const account = accountOf(ctx)
    const { plan } = input(ctx, checkoutSchema).body
    if (account.plan === plan) throw conflict(`Account is already on the ${plan} plan`)
    const url = await createCheckout(platform, account, service, plan, publicOrigin(platform, service, ctx))
    ctx.body = { checkout_url: url, plan }
  })

  router.post(WEBHOOK_PATH, stripeWebhook(platform, service))

  router.get('/api/v1/billing/success', (ctx) =>
    page(ctx, 'Payment received', 'Thank you. Your new plan is applied as soon as the payment is confirmed, usually within seconds. Your API key stays the same.'),
  )
  router.get('/api/v1/billing/cancel', (ctx) => page(ctx, 'Checkout cancelled', 'No payment was made and your plan is unchanged.'))

  return router
}
