// The Stripe simulator: an HTTP server speaking the subset of the Stripe API this project calls
// (checkout sessions: create, retrieve, list, expire; subscriptions: retrieve, cancel), form-encoded
// like Stripe and answering Stripe's JSON and error shapes, so the real `stripe` client drives it.
// It hosts the checkout page; paying completes the session and delivers a signed
// checkout.session.completed event (signed with the stripe library's own header format) to every
// webhook endpoint. It can be told to fail API calls and to drop webhooks, for fault tests.
import Router from '@koa/router'
import Koa, { type Context } from 'koa'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Stripe from 'stripe'
import { HttpError } from '../../platform/http/errors.ts'
import { readRawBody } from '../../platform/http/raw-body.ts'
import { base62 } from '../../platform/ids.ts'
import { parseStripeForm, type FormValue } from './form.ts'
import { checkoutPage, messagePage } from './page.ts'

export type Fault = 'none' | 'error' | 'disconnect'

export interface SimulatorOptions {
  secretKey?: string
  webhookSecret?: string
  /** Where events are delivered (every endpoint gets every event, as with Stripe). */
  webhookUrls?: string[]
  /** Seconds-resolution time source for `created` and signature timestamps. */
  now?: () => number
  host?: string
  port?: number
}

type Obj = Record<string, any>

interface LineItem {
  price: string | null
  product: string
  amount: number
  currency: string
  interval: string | null
  quantity: number
}

export interface Delivery {
  event_id: string
  type: string
  url: string
  status: number | 'error' | 'dropped'
}

class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly param?: string,
  ) {
    super(message)
  }
}

const missing = (param: string) => new StripeApiError(400, 'invalid_request_error', `Missing required param: ${param}.`, param)
const invalid = (param: string, why: string) => new StripeApiError(400, 'invalid_request_error', `Invalid ${param}: ${why}`, param)
const noSuch = (what: string, id: string) => new StripeApiError(404, 'invalid_request_error', `No such ${what}: '${id}'`)

const str = (v: FormValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined)

export class StripeSimulator {
  readonly secretKey: string
  readonly webhookSecret: string
  webhookUrls: string[]
  /** What API calls do: answer, answer 503, or drop the connection. */
  fault: Fault = 'none'
  /** Drop events instead of delivering them (the reconciliation sweep must catch up). */
  dropWebhooks = false
  readonly deliveries: Delivery[] = []
  /** Every event emitted, delivered or not (tests replay them). */
  readonly events: Obj[] = []
  readonly sessions = new Map<string, Obj>()
  readonly subscriptions = new Map<string, Obj>()
  private readonly lineItems = new Map<string, LineItem[]>()
  private readonly idempotent = new Map<string, { status: number; body: Obj }>()
  private readonly pending = new Set<Promise<void>>()
  private server: Server | null = null
  private readonly now: () => number
  url = ''

  constructor(private readonly opts: SimulatorOptions = {}) {
    this.secretKey = opts.secretKey ?? `sk_test_sim_${base62(24)}`
    this.webhookSecret = opts.webhookSecret ?? `whsec_sim_${base62(32)}`
    this.webhookUrls = opts.webhookUrls ?? []
    this.now = opts.now ?? (() => Math.floor(Date.now() / 1000))
  }

  async start(): Promise<this> {
    const app = this.app()
    const server = app.listen(this.opts.port ?? 0, this.opts.host ?? '127.0.0.1')
    await new Promise<void>((res, rej) => server.once('listening', res).once('error', rej))
    this.server = server
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    return this
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.pending])
    const s = this.server
    this.server = null
    if (s) await new Promise<void>((r) => { s.close(() => r()); s.closeAllConnections() })
  }

  /** Wait until every webhook delivery started so far has finished (tests). */
  async settled(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending])
  }

  // ── the Stripe objects ────────────────────────────────────────────────────────────────────

  createSession(p: Record<string, FormValue>): Obj {
    const mode = str(p.mode)
    if (!mode) throw missing('mode')
    if (!['payment', 'subscription', 'setup'].includes(mode)) throw invalid('mode', `must be one of payment, subscription, setup`)
    const success = str(p.success_url)
    if (!success) throw missing('success_url')
    if (!/^https?:\/\//.test(success)) throw invalid('success_url', 'Not a valid URL')
    const raw = p.line_items
    if (!Array.isArray(raw) || raw.length === 0) throw missing('line_items')
    const items: LineItem[] = raw.map((li, i) => this.lineItem(li, i, mode))
    const metadata = this.metadata(p.metadata, 'metadata')
    const sub = (p.subscription_data ?? {}) as Obj
    const customer = str(p.customer) ?? null
    const id = `cs_test_${base62(48)}`
    const amount = items.reduce((a, li) => a + li.amount * li.quantity, 0)
    const created = this.now()
    const session: Obj = {
      id,
      object: 'checkout.session',
      livemode: false,
      mode,
      status: 'open',
      payment_status: 'unpaid',
      url: `${this.url}/c/pay/${id}`,
      success_url: success,
      cancel_url: str(p.cancel_url) ?? null,
      client_reference_id: str(p.client_reference_id) ?? null,
      customer,
      customer_email: str(p.customer_email) ?? null,
      subscription: null,
      metadata,
      amount_subtotal: amount,
      amount_total: amount,
      currency: items[0]!.currency,
      created,
      expires_at: created + 24 * 3600,
      // Kept for the subscription the payment creates; Stripe does not echo it either.
      _subscription_metadata: this.metadata(sub.metadata, 'subscription_data[metadata]'),
    }
    this.sessions.set(id, session)
    this.lineItems.set(id, items)
    return session
  }

  private lineItem(li: FormValue, i: number, mode: string): LineItem {
    const o = (li ?? {}) as Obj
    const quantity = Number(o.quantity ?? 1)
    if (!Number.isInteger(quantity) || quantity < 1) throw invalid(`line_items[${i}][quantity]`, 'must be a positive integer')
    if (typeof o.price === 'string') {
      throw noSuch('price', o.price) // the simulator knows no catalogue: use price_data
    }
    const pd = o.price_data as Obj | undefined
    if (!pd) throw missing(`line_items[${i}][price_data]`)
    const currency = str(pd.currency)
    if (!currency || !/^[a-z]{3}$/.test(currency)) throw missing(`line_items[${i}][price_data][currency]`)
    const amount = Number(pd.unit_amount)
    if (!Number.isInteger(amount) || amount < 0) throw invalid(`line_items[${i}][price_data][unit_amount]`, 'must be a non-negative integer')
    const name = str((pd.product_data as Obj | undefined)?.name)
    if (!name) throw missing(`line_items[${i}][price_data][product_data][name]`)
    const interval = str((pd.recurring as Obj | undefined)?.interval) ?? null
    if (mode === 'subscription' && !interval) throw invalid(`line_items[${i}][price_data][recurring]`, 'subscription mode needs a recurring price')
    return { price: null, product: name, amount, currency, interval, quantity }
  }

  private metadata(v: FormValue | undefined, param: string): Record<string, string> {
    if (v === undefined || v === '') return {}
    if (typeof v !== 'object' || Array.isArray(v)) throw invalid(param, 'must be a hash')
    const out: Record<string, string> = {}
    for (const [k, val] of Object.entries(v)) {
      if (typeof val !== 'string') throw invalid(`${param}[${k}]`, 'must be a string')
      if (k.length > 40 || val.length > 500) throw invalid(`${param}[${k}]`, 'keys up to 40 and values up to 500 characters')
      out[k] = val
    }
    return out
  }

  /** Pay an open session, as the hosted page's Pay button does. */
  pay(id: string): Obj {
    const s = this.sessions.get(id)
    if (!s) throw noSuch('checkout.session', id)
    if (s.status !== 'open') throw new StripeApiError(400, 'invalid_request_error', `This Checkout Session is ${s.status}.`)
    const customer = s.customer ?? `cus_${base62(14)}`
    s.customer = customer
    if (s.mode === 'subscription') {
      const li = this.lineItems.get(id)![0]!
      const sub: Obj = {
        id: `sub_${base62(24)}`,
        object: 'subscription',
        livemode: false,
        status: 'active',
        customer,
        metadata: s._subscription_metadata,
        items: { object: 'list', data: [{ object: 'subscription_item', quantity: li.quantity, price: { object: 'price', unit_amount: li.amount, currency: li.currency, recurring: { interval: li.interval } } }] },
        created: this.now(),
        canceled_at: null,
        ended_at: null,
      }
      this.subscriptions.set(sub.id, sub)
      s.subscription = sub.id
    }
    s.status = 'complete'
    s.payment_status = 'paid'
    s.url = null
    this.emit('checkout.session.completed', this.publicSession(s))
    return s
  }

  /** Cancel a subscription now (DELETE /v1/subscriptions/:id does the same). */
  cancelSubscription(id: string): Obj {
    const sub = this.subscriptions.get(id)
    if (!sub) throw noSuch('subscription', id)
    if (sub.status !== 'canceled') {
      sub.status = 'canceled'
      sub.canceled_at = sub.ended_at = this.now()
      this.emit('customer.subscription.deleted', { ...sub })
    }
    return sub
  }

  private expire(id: string): Obj {
    const s = this.sessions.get(id)
    if (!s) throw noSuch('checkout.session', id)
    if (s.status !== 'open') throw new StripeApiError(400, 'invalid_request_error', `Only Checkout Sessions with a status of open can be expired.`)
    s.status = 'expired'
    s.url = null
    this.emit('checkout.session.expired', this.publicSession(s))
    return s
  }

  publicSession(s: Obj): Obj {
    const { _subscription_metadata, ...rest } = s
    return rest
  }

  // ── events ────────────────────────────────────────────────────────────────────────────────

  private emit(type: string, object: Obj): void {
    const event = {
      id: `evt_${base62(24)}`,
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: this.now(),
      type,
      livemode: false,
      pending_webhooks: this.webhookUrls.length,
      request: { id: null, idempotency_key: null },
      data: { object },
    }
    this.events.push(event)
    for (const url of this.webhookUrls) {
      if (this.dropWebhooks) {
        this.deliveries.push({ event_id: event.id, type, url, status: 'dropped' })
        continue
      }
      const p = this.deliver(event, url).finally(() => this.pending.delete(p))
      this.pending.add(p)
    }
  }

  /** Send one event with the stripe library's own signature header; retry briefly on failure. */
  async deliver(event: Obj, url: string, attempts = 3): Promise<void> {
    const payload = JSON.stringify(event, null, 2)
    for (let i = 0; i < attempts; i++) {
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: this.webhookSecret, timestamp: this.now() })
      let status: number | 'error'
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': header, 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' },
          body: payload,
          signal: AbortSignal.timeout(10_000),
        })
        await res.arrayBuffer()
        status = res.status
      } catch {
        status = 'error'
      }
      this.deliveries.push({ event_id: event.id, type: event.type, url, status })
      if (typeof status === 'number' && status >= 200 && status < 300) return
      if (typeof status === 'number' && status >= 400 && status < 500) return
      await new Promise((r) => setTimeout(r, 300 * 2 ** i))
    }
  }

  // ── HTTP ──────────────────────────────────────────────────────────────────────────────────

  private app(): Koa {
    const app = new Koa()
    app.silent = true
    const router = new Router()
    app.use(async (ctx, next) => {
      try {
        await next()
      } catch (err) {
        const e = err instanceof StripeApiError ? err : new StripeApiError(500, 'api_error', 'An unexpected error occurred.')
        ctx.status = e.status
        ctx.body = { error: { type: e.type, message: e.message, ...(e.param ? { param: e.param } : {}) } }
      }
      ctx.set('Request-Id', `req_${base62(14)}`)
    })

    const api = async (ctx: Context, next: () => Promise<unknown>) => {
      if (this.fault === 'disconnect') {
        ctx.req.socket.destroy()
        return
      }
      if (this.fault === 'error') throw new StripeApiError(503, 'api_error', 'The Stripe simulator is told to fail.')
      const key = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1]
      if (key !== this.secretKey) throw new StripeApiError(401, 'invalid_request_error', 'Invalid API Key provided.')
      const idem = ctx.method === 'POST' ? ctx.get('idempotency-key') : ''
      const seen = idem && this.idempotent.get(idem)
      if (seen) {
        ctx.status = seen.status
        ctx.body = seen.body
        ctx.set('Idempotent-Replayed', 'true')
        return
      }
      ctx.state.form = ctx.method === 'GET' ? parseStripeForm(ctx.querystring) : parseStripeForm(await readBody(ctx))
      await next()
      if (idem) this.idempotent.set(idem, { status: ctx.status, body: ctx.body as Obj })
    }

    router.post('/v1/checkout/sessions', api, (ctx) => {
      ctx.body = this.publicSession(this.createSession(ctx.state.form))
    })
    router.get('/v1/checkout/sessions', api, (ctx) => {
      const f = ctx.state.form as Obj
      const limit = Math.min(100, Math.max(1, Number(f.limit ?? 10) || 10))
      let all = [...this.sessions.values()].reverse() // newest first
      if (typeof f.status === 'string') all = all.filter((s) => s.status === f.status)
      if (typeof f.customer === 'string') all = all.filter((s) => s.customer === f.customer)
      if (typeof f.starting_after === 'string') {
        const i = all.findIndex((s) => s.id === f.starting_after)
        all = i >= 0 ? all.slice(i + 1) : []
      }
      ctx.body = { object: 'list', url: '/v1/checkout/sessions', has_more: all.length > limit, data: all.slice(0, limit).map((s) => this.publicSession(s)) }
    })
    router.get('/v1/checkout/sessions/:id', api, (ctx) => {
      const s = this.sessions.get(ctx.params.id!)
      if (!s) throw noSuch('checkout.session', ctx.params.id!)
      ctx.body = this.publicSession(s)
    })
    router.post('/v1/checkout/sessions/:id/expire', api, (ctx) => {
      ctx.body = this.publicSession(this.expire(ctx.params.id!))
    })
    router.get('/v1/subscriptions/:id', api, (ctx) => {
      const sub = this.subscriptions.get(ctx.params.id!)
      if (!sub) throw noSuch('subscription', ctx.params.id!)
      ctx.body = sub
    })
    router.delete('/v1/subscriptions/:id', api, (ctx) => {
      ctx.body = this.cancelSubscription(ctx.params.id!)
    })

    // The hosted checkout page and its Pay button.
    router.get('/c/pay/:id', (ctx) => {
      const s = this.sessions.get(ctx.params.id!)
      ctx.type = 'html'
      if (!s) {
        ctx.status = 404
        ctx.body = messagePage('Checkout', 'Something went wrong: this checkout session does not exist.')
        return
      }
      const li = this.lineItems.get(s.id)![0]!
      ctx.body = checkoutPage({
        id: s.id,
        status: s.status,
        product: li.product,
        plan: s.metadata.plan ?? li.product,
        amount: s.amount_total,
        currency: s.currency,
        interval: li.interval,
        email: s.customer_email,
        cancel_url: s.cancel_url,
      })
    })
    router.post('/c/pay/:id', (ctx) => {
      const s = this.sessions.get(ctx.params.id!)
      ctx.type = 'html'
      if (!s || s.status !== 'open') {
        ctx.status = s ? 400 : 404
        ctx.body = messagePage('Checkout', s ? `This checkout session is ${s.status}.` : 'This checkout session does not exist.')
        return
      }
      this.pay(s.id)
      ctx.redirect(String(s.success_url).replaceAll('{CHECKOUT_SESSION_ID}', s.id))
      ctx.status = 303
    })

    // Controls for running by hand (`start` mode); tests use the object's fields directly. The
    // simulator listens on loopback and moves no money, so they need no key.
    const control = async (ctx: Context, next: () => Promise<unknown>) => {
      ctx.state.form = parseStripeForm(await readBody(ctx))
      await next()
    }
    router.post('/_simulator/fault', control, (ctx) => {
      const mode = ctx.state.form.mode
      if (mode !== 'none' && mode !== 'error' && mode !== 'disconnect') throw invalid('mode', 'must be one of none, error, disconnect')
      this.fault = mode
      ctx.body = { fault: this.fault }
    })
    router.post('/_simulator/drop_webhooks', control, (ctx) => {
      this.dropWebhooks = ctx.state.form.drop === 'true'
      ctx.body = { drop_webhooks: this.dropWebhooks }
    })

    app.use(router.routes())
    app.use((ctx) => {
      throw new StripeApiError(404, 'invalid_request_error', `Unrecognized request URL (${ctx.method}: ${ctx.path}).`)
    })
    return app
  }
}

async function readBody(ctx: Context, limit = 1024 * 1024): Promise<string> {
  try {
    return (await readRawBody(ctx, limit)).toString('utf8')
  } catch (err) {
    // Stripe's own error shape, so the stripe client sees what the real API would send.
    if (err instanceof HttpError && err.status === 413) throw new StripeApiError(413, 'invalid_request_error', 'Request body too large.')
    throw err
  }
}

export async function startStripeSimulator(opts: SimulatorOptions = {}): Promise<StripeSimulator> {
  return new StripeSimulator(opts).start()
}
