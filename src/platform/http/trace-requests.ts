// The HTTP server span of each request when tracing is on (createApp installs this only then): it
// continues a caller's W3C `traceparent`, and is the active context while the request runs, so the
// jobs it enqueues (bullmq-otel producer spans) and their processing join the same trace.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import type { Context, Middleware } from 'koa'

export function traceRequests(service: string): Middleware {
  const tracer = trace.getTracer('queueworks-http')
  return (ctx: Context, next) => {
    const parent = propagation.extract(context.active(), ctx.headers)
    const span = tracer.startSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.path': ctx.path, 'queueworks.service': service } },
      parent,
    )
    return context.with(trace.setSpan(parent, span), async () => {
      try {
        await next()
      } catch (err) {
        span.recordException(err as Error)
        throw err
      } finally {
        // Named by the route template once routing chose it (the raw path would be unbounded).
        const route = ctx.state.route ?? (ctx as any)._matchedRoute
        if (typeof route === 'string') {
          span.updateName(`${ctx.method} ${route}`)
          span.setAttribute('http.route', route)
        }
        span.setAttribute('http.response.status_code', ctx.status)
        if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR })
        span.end()
      }
    })
  }
}
