// OpenTelemetry: one POST /invoice is one trace from the HTTP server span, through the enqueue
// (producer span, context stored with the job in Redis) to the worker's process span — in one
// process with an in-memory exporter, and with the worker as its own process exporting over
// OTLP/HTTP to a collector on 127.0.0.1. With tracing off, jobs carry no trace context. With it on,
// hot routes are served through Koa so that they get their server span too.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ChildProcess } from 'node:child_process'
import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { loadConfig } from '../src/platform/config.ts'
import { queueTelemetry, startTracing, stopTracing, tracingOn } from '../src/platform/tracing.ts'
import { QueueName } from './helpers/queue-names.ts'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { readConsumers } from '../src/platform/queue/consumers.ts'
import { post } from './helpers/http.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch(() => undefined)
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

const INVOICE = { items: [{ description: 'Traced work', quantity: 1, unit_price: 10 }] }

/** A caller's W3C trace context: the trace every span of the request must join. */
function callerContext() {
  const traceId = randomBytes(16).toString('hex')
  const parentId = randomBytes(8).toString('hex')
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` }
}

async function invoiceWithTrace(sys: TestSystem, email: string, traceparent: string) {
  const key = (await post(`${sys.url.invoice}/signup`, { email })).json.api_key
  const res = await post(`${sys.url.invoice}/invoice`, INVOICE, { key, headers: { traceparent } })
  assert.equal(res.status, 200, res.text)
  return res.headers.get('x-invoice-id')!
}

describe('ops: tracing is off without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: { queues: [QueueName.InvoiceRender] } })
  })
  after(() => sys?.stop())

  it('an endpoint that is not an http(s) URL stops the process naming the variable', () => {
    assert.throws(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT/)
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).OTEL_EXPORTER_OTLP_ENDPOINT, 'http://collector:4318')
    assert.equal(loadConfig({}).OTEL_EXPORTER_OTLP_ENDPOINT, undefined)
  })

  it('no SDK, no BullMQ telemetry: a render job stores no trace context', async () => {
    assert.equal(tracingOn(), false)
    assert.equal(queueTelemetry(), undefined)
    const id = await invoiceWithTrace(sys, 'untraced@example.com', callerContext().header)
    const job = await sys.platform.queues.queue(QueueName.InvoiceRender).getJob(id)
    assert.ok(job, 'the render job is kept after completion')
    assert.equal(job.opts.telemetry, undefined)
  })
})

describe('ops: one invoice request is one trace across API and worker (in-memory exporter)', () => {
  const exporter = new InMemorySpanExporter()
  let sys: TestSystem
  before(async () => {
    await startTracing({ serviceName: 'queueworks-test', exporter })
    sys = await startSystem({ services: ['invoice', 'flags'], workers: { queues: [QueueName.InvoiceRender] } })
  })
  after(async () => {
    await sys?.stop()
    await stopTracing()
  })

  it("with tracing on, a hot route (POST /api/v1/evaluate, otherwise answered before Koa) gets its server span in the caller's trace", async () => {
    const caller = callerContext()
    const r = await post(`${sys.url.flags}/api/v1/evaluate`, { sdk_key: 'fbsdk_nope' }, { headers: { traceparent: caller.header } })
    assert.equal(r.status, 401, r.text)
    const span = await until('evaluate server span', () =>
      exporter.getFinishedSpans().find((s) => s.spanContext().traceId === caller.traceId && s.kind === SpanKind.SERVER),
    )
    assert.equal(span.name, 'POST /api/v1/evaluate')
    assert.equal(span.parentSpanContext?.spanId, caller.parentId)
    assert.equal(span.attributes['http.response.status_code'], 401)
  })

  it('HTTP server span → producer span (add) → consumer span (process), all in the caller\'s trace', async () => {
    const caller = callerContext()
    const id = await invoiceWithTrace(sys, 'traced@example.com', caller.header)
    const inTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === caller.traceId)
    const find = (kind: SpanKind, name: RegExp) => inTrace().find((s) => s.kind === kind && name.test(s.name))
    const server = await until('server span', () => find(SpanKind.SERVER, /^POST \/api\/v1\/invoice$/))
    const producer = await until('producer span', () => find(SpanKind.PRODUCER, /^add invoice-render/))
    const consumer = await until('consumer span', () => find(SpanKind.CONSUMER, /^process invoice-render$/))
    const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId
    assert.equal(parentOf(server), caller.parentId, 'the server span continues the caller\'s traceparent')
    assert.equal(parentOf(producer), server.spanContext().spanId, 'the enqueue happens inside the request')
    assert.equal(parentOf(consumer), producer.spanContext().spanId, 'the worker continues from the job\'s stored context')
    assert.equal(server.attributes['http.response.status_code'], 200)
    assert.equal(consumer.attributes['bullmq.job.id'], id)
    // And the job in Redis carries the context the worker read.
    const job = await sys.platform.queues.queue(QueueName.InvoiceRender).getJob(id)
    assert.match(JSON.stringify(job!.opts.telemetry), new RegExp(caller.traceId))
  })
})

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  serviceName?: string
}

describe('ops: a worker process exports its part of the trace over OTLP/HTTP', () => {
  const exporter = new InMemorySpanExporter()
  const received: OtlpSpan[] = []
  let collector: Server
  let sys: TestSystem
  let worker: ChildProcess | undefined

  before(async function () {
    this.timeout(240_000)
    // A collector that understands OTLP/HTTP JSON (what @opentelemetry/exporter-trace-otlp-http sends).
    collector = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c) => chunks.push(c))
      req.on('end', () => {
        if (req.url === '/v1/traces') {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
          for (const rs of body.resourceSpans ?? []) {
            const serviceName = rs.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue
            for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) received.push({ ...s, serviceName })
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r))
    await startTracing({ serviceName: 'queueworks-test', exporter })
    sys = await startSystem({ services: ['invoice'], workers: false })
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
    worker = spawnWorker({ ...sys.env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '200' }, ['--queues', QueueName.InvoiceRender])
    // Invoices are refused (503) until a worker consumes the render queue.
    await until('the worker process to consume invoice-render', async () => (await readConsumers(sys.platform, QueueName.InvoiceRender)).workers > 0 || undefined, 150_000)
  })
  after(async () => {
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      worker.kill('SIGKILL')
      await waitForExit(worker)
    }
    await sys?.stop()
    await stopTracing()
    collector?.close()
  })

  it('the API\'s producer span is the parent of the worker process\'s consumer span, same trace id', async function () {
    this.timeout(120_000)
    const caller = callerContext()
    await invoiceWithTrace(sys, 'otlp@example.com', caller.header)
    const producer = await until('producer span', () =>
      exporter.getFinishedSpans().find((s) => s.spanContext().traceId === caller.traceId && s.kind === SpanKind.PRODUCER),
    )
    const consumer = await until('consumer span at the collector', () =>
      received.find((s) => s.traceId === caller.traceId && s.name === 'process invoice-render'),
    )
    assert.equal(consumer.parentSpanId, producer.spanContext().spanId)
    assert.equal(consumer.serviceName, 'queueworks-worker')
  })
})
