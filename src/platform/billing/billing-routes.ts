// Billing routes every service mounts: POST /api/v1/checkout (start a plan upgrade),
// POST /api/v1/billing/stripe-webhook (Stripe's events), and the pages Stripe sends the payer
// back to after paying or cancelling.
import { createHash } from 'node:crypto'
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

/** Where each console shows the plan: the payer goes back there (the flags console has no account screen). */
const CONSOLE_RETURN: Record<Service, { path: string; label: string }> = {
  invoice: { path: '/account', label: 'Back to your account' },
  webhooks: { path: '/account', label: 'Back to your account' },
  flags: { path: '/', label: 'Back to the console' },
}

// The pages' one style block, allowed by its hash: no script and nothing else may load.
const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#1a1f36;line-height:1.5}' +
  'a{color:#3730a3}a:focus-visible{outline:3px solid #3730a3;outline-offset:2px}'
const PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

function page(ctx: Context, service: Service, title: string, message: string) {
  const back = CONSOLE_RETURN[service]
  ctx.type = 'html'
  ctx.set('Cache-Control', 'no-store')
  ctx.set('Content-Security-Policy', PAGE_CSP)
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${title}</title><style>${STYLE}</style></head>` +
    `<body><main><h1>${title}</h1><p id="status">${message}</p><p><a id="back" href="${back.path}">${back.label}</a></p></main></body></html>`
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
    page(ctx, service, 'Payment received', 'Thank you. Your new plan is applied as soon as the payment is confirmed, usually within seconds. Your API key stays the same.'),
  )
  router.get('/api/v1/billing/cancel', (ctx) => page(ctx, service, 'Checkout cancelled', 'No payment was made and your plan is unchanged.'))

  return router
}
