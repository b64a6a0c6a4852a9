// OpenTelemetry tracing of a request through the queue into the worker. Off unless
// OTEL_EXPORTER_OTLP_ENDPOINT is set (spans then go out over OTLP/HTTP) or a test hands in an
// exporter: when off, the SDK is never loaded, no HTTP middleware is installed and queues and
// workers get no BullMQ telemetry, so nothing is paid per request or per job.
// The trace context travels from the HTTP server span (http/trace-requests.ts) to the producer span
// of Queue.add, inside the job's options in Redis, to the worker's consumer span (bullmq-otel).
import { context, propagation, trace } from '@opentelemetry/api'
import type { SpanExporter } from '@opentelemetry/sdk-trace-node'
import { BullMQOtel } from 'bullmq-otel'

interface Running {
  telemetry: BullMQOtel
  shutdown(): Promise<void>
}

let running: Running | null = null

/** True once startTracing ran in this process. */
export function tracingOn(): boolean {
  return running !== null
}

/** What Queue and Worker take as `telemetry`: undefined (no tracing, no cost) unless tracing is on. */
export function queueTelemetry(): BullMQOtel | undefined {
  return running?.telemetry
}

export interface TracingOptions {
  /** service.name of the spans (OTEL_SERVICE_NAME wins when set). */
  serviceName: string
  /** OTLP/HTTP base address (OTEL_EXPORTER_OTLP_ENDPOINT); the exporter posts to <endpoint>/v1/traces. */
  endpoint?: string
  /** An exporter to use instead of OTLP (tests: InMemorySpanExporter), with spans exported as they end. */
  exporter?: SpanExporter
}

/**
 * Start tracing for this process when an endpoint or exporter is given; a no-op otherwise. Call it
 * before the platform is built: queues, workers and apps created earlier are not traced.
 */
export async function startTracing(opts: TracingOptions): Promise<void> {
  if (running || (!opts.endpoint && !opts.exporter)) return
  // Loaded only when tracing is on.
  const { NodeTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-node')
  const { resourceFromAttributes } = await import('@opentelemetry/resources')
  let processor
  if (opts.exporter) {
    processor = new SimpleSpanProcessor(opts.exporter)
  } else {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
    // The exporter also honours OTEL_EXPORTER_OTLP_HEADERS / _TIMEOUT from the environment.
    processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.endpoint!.replace(/\/+$/, '')}/v1/traces` }))
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME || opts.serviceName }),
    spanProcessors: [processor],
  })
  // Global tracer provider, AsyncLocalStorage context manager, W3C traceparent propagator.
  provider.register()
  running = {
    telemetry: new BullMQOtel({ tracerName: 'queueworks' }),
    async shutdown() {
      await provider.shutdown()
      trace.disable()
      context.disable()
      propagation.disable()
    },
  }
}

/** Flush spans still buffered and turn tracing off (on shutdown, and between tests). */
export async function stopTracing(): Promise<void> {
  const r = running
  running = null
  await r?.shutdown()
}
