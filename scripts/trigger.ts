// `queueworks trigger <sender> --endpoint TOKEN --secret S`: sends one realistic, signed test event
// of a sender (trigger/events.ts) to an endpoint's capture URL, as `stripe trigger` does for Stripe,
// so a receiver (or `listen`) can be tried without the sender. Endpoints keep no signing secret
// (the verify action takes it per call), so the secret is given here: --secret or
// QUEUEWORKS_TRIGGER_SECRET. docs/webhooks-tools.md, "`trigger`".
import { hasDotSegment } from '../src/webhooks/forward/outbound.ts'
import { parseCommandLine } from './command-line.ts'
import { SecretError, SENDERS, type Sender } from './trigger/events.ts'
import { NotCaptured, sendTestEvent } from './trigger/send.ts'

function usage(): string {
  return [
    'usage: queueworks trigger <sender> --endpoint <token> --secret S (or QUEUEWORKS_TRIGGER_SECRET)',
    '         [--api http://localhost:3003 (or WEBHOOKS_URL)] [--path /sub/path]',
    `       senders: ${Object.keys(SENDERS).join(', ')}`,
  ].join('\n')
}

function fail(code: number, message: string): never {
  process.stderr.write(`error: ${message}\n`)
  process.exit(code)
}

async function main() {
  const { values, args } = parseCommandLine({
    command: 'trigger',
    options: {
      endpoint: { type: 'string' },
      secret: { type: 'string' },
      api: { type: 'string' },
      path: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    usage,
    fail,
  })
  if (args.length !== 1) fail(2, `expected one sender\n${usage()}`)
  const sender = args[0]!
  if (!Object.hasOwn(SENDERS, sender)) fail(2, `unknown sender "${sender}": one of ${Object.keys(SENDERS).join(', ')}`)
  const token = values.endpoint
  if (!token || !/^[A-Za-z0-9_-]+$/.test(token)) fail(2, `--endpoint <token> is required (the id in the capture URL /hook/<token>)\n${usage()}`)
  const secret = values.secret ?? process.env.QUEUEWORKS_TRIGGER_SECRET
  if (!secret) fail(2, 'a signing secret is required: --secret S or QUEUEWORKS_TRIGGER_SECRET (the one your receiver verifies with)')
  if (values.path !== undefined && !/^\/[\x21-\x7e]*$/.test(values.path)) fail(2, `--path must start with / and hold no spaces (got ${JSON.stringify(values.path)})`)
  // fetch would resolve `..` (and a server might resolve `%2e%2e`) and send the event somewhere
  // other than under /hook/<token>: refused as listen and forwarding refuse such captured paths.
  if (values.path !== undefined && hasDotSegment(values.path)) fail(2, `--path must not hold . or .. segments, in any encoding (got ${JSON.stringify(values.path)})`)
  const api = (values.api ?? process.env.WEBHOOKS_URL ?? 'http://localhost:3003').replace(/\/+$/, '')

  try {
    const sent = await sendTestEvent({ sender: sender as Sender, token, secret, api, ...(values.path !== undefined ? { path: values.path } : {}) })
    process.stdout.write(`Sent ${sender} ${sent.type} to ${sent.url} → ${sent.status}${sent.captureId !== undefined ? ` (capture ${sent.captureId})` : ''}\n`)
  } catch (err) {
    if (err instanceof SecretError) fail(2, err.message)
    if (err instanceof NotCaptured) fail(1, err.message)
    throw err
  }
}

main().catch((err) => fail(1, (err as Error).stack ?? String(err)))
