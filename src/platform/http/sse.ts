// Server-Sent Events on a Koa context, for any domain: the response head, a comment heartbeat so
// proxies and clients do not call an idle stream dead, and a cut-off for a client that stops
// reading (its buffer would otherwise grow without bound; it reconnects and resumes by state).
import { PassThrough } from 'node:stream'
import type { Context } from 'koa'

export interface SseOptions {
  /** Comment lines at this interval (ms). */
  heartbeatMs: number
  /** The client's reconnect delay (`retry:`), ms. */
  retryMs?: number
  /** A client with this many bytes unread is cut off. */
  maxBufferedBytes?: number
  /** Called once when the stream ends, whoever ended it. */
  onClose?: () => void
}

export interface SseStream {
  /** Writes one event; false once the stream is closed. */
  send(ev: { event?: string; id?: string; data: string }): boolean
  /** Writes an event already in wire form (sseFrame), e.g. one serialised once for many streams. */
  sendFrame(frame: string): boolean
  comment(text: string): void
  close(): void
  readonly closed: boolean
}

/** One event as the wire format has it: every line of `data` gets its own `data:` field. */
export function sseFrame(ev: { event?: string; id?: string; data: string }): string {
  let out = ''
  if (ev.id !== undefined) out += `id: ${ev.id.replace(/[\r\n]/g, '')}\n`
  if (ev.event !== undefined) out += `event: ${ev.event.replace(/[\r\n]/g, '')}\n`
  for (const line of ev.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`
  return out + '\n'
}

/** Turns the response into an event stream (status 200); call after every check that can fail. */
export function openSse(ctx: Context, opts: SseOptions): SseStream {
  const out = new PassThrough()
  const max = opts.maxBufferedBytes ?? 1024 * 1024
  let closed = false
  const write = (chunk: string) => {
    if (closed) return false
    out.write(chunk)
    if (out.writableLength > max) stream.close()
    return !closed
  }
  const heartbeat = setInterval(() => write(': ping\n\n'), opts.heartbeatMs)
  const stream: SseStream = {
    send: (ev) => write(sseFrame(ev)),
    sendFrame: write,
    comment: (text) => void write(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`),
    close() {
      if (closed) return
      closed = true
      clearInterval(heartbeat)
      out.end()
      opts.onClose?.()
    },
    get closed() {
      return closed
    },
  }
  ctx.req.on('close', () => stream.close())
  ctx.req.socket.setTimeout(0)
  ctx.req.socket.setNoDelay(true)
  ctx.status = 200
  ctx.set('Content-Type', 'text/event-stream; charset=utf-8')
  ctx.set('Cache-Control', 'no-store, no-transform')
  ctx.set('X-Accel-Buffering', 'no') // nginx: do not buffer the stream
  ctx.body = out
  if (opts.retryMs !== undefined) out.write(`retry: ${opts.retryMs}\n\n`)
  return stream
}
