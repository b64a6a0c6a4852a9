// The test events `queueworks trigger` sends: one realistic delivery per sender whose signature the
// service verifies as that sender's verifier would (src/webhooks/signatures/), shaped like the
// sender's own (body fields, headers, user agent) and signed with the sender's official library
// where one signs (stripe, @octokit/webhooks-methods, svix, standardwebhooks); Shopify has none, so
// its HMAC follows Shopify's documentation. Ids are fresh on every run so deliveries never collide.
import { createHmac, randomBytes, randomUUID } from 'node:crypto'
import { sign as githubSign } from '@octokit/webhooks-methods'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import Stripe from 'stripe'
import { Webhook as SvixWebhook } from 'svix'

export interface TestEvent {
  /** What the event is, as the sender names it. */
  type: string
  /** Sent as the request's sub-path, after /hook/<token>. */
  subPath: string
  headers: Record<string, string>
  body: string
}

const id = (prefix: string, n = 24) => `${prefix}${randomBytes(n).toString('base64url').replace(/[-_]/g, '').slice(0, n)}`
const nowSec = () => Math.floor(Date.now() / 1000)

async function stripe(secret: string): Promise<TestEvent> {
  const pi = id('pi_')
  const created = nowSec()
  const body = JSON.stringify(
    {
      id: id('evt_'),
      object: 'event',
      api_version: '2025-03-31.basil',
      created,
      data: {
        object: {
          id: pi,
          object: 'payment_intent',
          amount: 2000,
          amount_received: 2000,
          currency: 'usd',
          status: 'succeeded',
          capture_method: 'automatic_async',
          client_secret: `${pi}_secret_${id('', 25)}`,
          created,
          customer: null,
          description: '(created by queueworks trigger)',
          latest_charge: id('ch_'),
          livemode: false,
          metadata: {},
          payment_method: id('pm_'),
          payment_method_types: ['card'],
        },
      },
      livemode: false,
      pending_webhooks: 1,
      request: { id: id('req_', 14), idempotency_key: randomUUID() },
      type: 'payment_intent.succeeded',
    },
    null,
    2,
  )
  return {
    type: 'payment_intent.succeeded',
    subPath: '/stripe',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      'Stripe-Signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
    },
    body,
  }
}

async function github(secret: string): Promise<TestEvent> {
  const before = randomBytes(20).toString('hex')
  const after = randomBytes(20).toString('hex')
  const when = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
  const user = { name: 'Octocat', email: 'octocat@users.noreply.github.com', username: 'octocat' }
  const body = JSON.stringify({
    ref: 'refs/heads/main',
    before,
    after,
    repository: {
      id: 1296269,
      name: 'hello-world',
      full_name: 'octocat/hello-world',
      private: false,
      owner: { login: 'octocat', id: 583231, type: 'User' },
      html_url: 'https://github.com/octocat/hello-world',
      default_branch: 'main',
    },
    pusher: { name: 'octocat', email: user.email },
    sender: { login: 'octocat', id: 583231, type: 'User' },
    created: false,
    deleted: false,
    forced: false,
    compare: `https://github.com/octocat/hello-world/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`,
    commits: [
      {
        id: after,
        tree_id: randomBytes(20).toString('hex'),
        distinct: true,
        message: 'Test push from queueworks trigger',
        timestamp: when,
        url: `https://github.com/octocat/hello-world/commit/${after}`,
        author: user,
        committer: user,
        added: [],
        removed: [],
        modified: ['README.md'],
      },
    ],
    head_commit: null,
  })
  // GitHub sends both signatures; the SHA-1 one for old receivers.
  const sha1 = `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`
  return {
    type: 'push',
    subPath: '/github',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': `GitHub-Hookshot/${randomBytes(4).toString('hex').slice(0, 7)}`,
      'X-GitHub-Event': 'push',
      'X-GitHub-Delivery': randomUUID(),
      'X-GitHub-Hook-ID': String(400_000_000 + Math.floor(Math.random() * 1e8)),
      'X-GitHub-Hook-Installation-Target-Type': 'repository',
      'X-GitHub-Hook-Installation-Target-ID': '1296269',
      'X-Hub-Signature': sha1,
      'X-Hub-Signature-256': await githubSign(secret, body),
    },
    body,
  }
}

async function shopify(secret: string): Promise<TestEvent> {
  const orderId = 5_000_000_000_000 + Math.floor(Math.random() * 1e12)
  const now = new Date().toISOString()
  const body = JSON.stringify({
    id: orderId,
    admin_graphql_api_id: `gid://shopify/Order/${orderId}`,
    name: '#1001',
    order_number: 1001,
    email: 'customer@example.com',
    created_at: now,
    currency: 'USD',
    financial_status: 'paid',
    fulfillment_status: null,
    subtotal_price: '39.00',
    total_tax: '0.00',
    total_price: '39.00',
    test: true,
    line_items: [{ id: orderId + 1, title: 'Test product', quantity: 1, price: '39.00', sku: 'TEST-1', product_id: 7_000_000_000_000 }],
    customer: { id: 6_000_000_000_000, email: 'customer@example.com', first_name: 'Test', last_name: 'Customer' },
  })
  return {
    type: 'orders/create',
    subPath: '/shopify',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'Shopify-Captain-Hook',
      'X-Shopify-Topic': 'orders/create',
      'X-Shopify-Shop-Domain': 'queueworks-test.myshopify.com',
      'X-Shopify-API-Version': '2025-07',
      'X-Shopify-Webhook-Id': randomUUID(),
      'X-Shopify-Event-Id': randomUUID(),
      'X-Shopify-Triggered-At': now,
      'X-Shopify-Hmac-Sha256': createHmac('sha256', secret).update(body).digest('base64'),
    },
    body,
  }
}

/** Svix and Standard Webhooks sign alike; the secret is `whsec_<base64>`. */
function svixLike(kind: 'svix' | 'standard-webhooks') {
  return async (secret: string): Promise<TestEvent> => {
    const msgId = id('msg_', 27)
    const at = new Date()
    const body = JSON.stringify({ type: 'invoice.paid', timestamp: at.toISOString(), data: { id: id('inv_', 16), amount: 4200, currency: 'EUR', customer: 'cus_test' } })
    let signature: string
    try {
      signature = kind === 'svix' ? new SvixWebhook(secret).sign(msgId, at, body) : new StandardWebhook(secret).sign(msgId, at, body)
    } catch (err) {
      throw new SecretError(`${kind} needs a secret of the form whsec_<base64> (${(err as Error).message})`)
    }
    const p = kind === 'svix' ? 'svix' : 'webhook'
    return {
      type: 'invoice.paid',
      subPath: `/${kind}`,
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': kind === 'svix' ? 'Svix-Webhooks/1.0' : 'queueworks-trigger',
        [`${p}-id`]: msgId,
        [`${p}-timestamp`]: String(Math.floor(at.getTime() / 1000)),
        [`${p}-signature`]: signature,
      },
      body,
    }
  }
}

export class SecretError extends Error {}

export const SENDERS = {
  stripe,
  github,
  shopify,
  svix: svixLike('svix'),
  'standard-webhooks': svixLike('standard-webhooks'),
} as const

export type Sender = keyof typeof SENDERS
