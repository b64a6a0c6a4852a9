// Captures as HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/), to open them in browser
// dev tools, Insomnia, Postman or any HAR viewer. The request is exactly what was captured
// (headers in arrival order, the body as text or, when it is not UTF-8, base64 with
// `encoding: "base64"`); the response is the endpoint's configured answer, which is what the
// capture URL sent (it is not stored per capture, so a later change of the endpoint shows here).
import { isUtf8 } from 'node:buffer'
import type { CaptureDoc } from '../store/capture-store.ts'
import type { EndpointDoc } from '../store/endpoint-store.ts'

const CREATOR = { name: 'queueworks webhook capture', version: '1.0' }

function pairs(raw: string[]): Array<{ name: string; value: string }> {
  const out: Array<{ name: string; value: string }> = []
  for (let i = 0; i + 1 < raw.length; i += 2) out.push({ name: raw[i]!, value: raw[i + 1]! })
  return out
}

function queryString(query: string): Array<{ name: string; value: string }> {
  return [...new URLSearchParams(query)].map(([name, value]) => ({ name, value }))
}

/** `body` null: left out (a set's bodies over 1 MiB, as in lists); the entry says so. */
export function harEntry(cap: CaptureDoc, body: Buffer | null, ep: EndpointDoc, base: string) {
  const text = body !== null && isUtf8(body)
  const answer = Buffer.from(ep.response_body, 'utf8')
  return {
    startedDateTime: cap.received_at.toISOString(),
    time: 0,
    request: {
      method: cap.method,
      url: `${base}${cap.path}${cap.query ? `?${cap.query}` : ''}`,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: pairs(cap.raw_headers),
      queryString: queryString(cap.query),
      ...(body === null
        ? { postData: { mimeType: cap.content_type ?? 'application/octet-stream', params: [], comment: `body of ${cap.size_bytes} bytes left out: export this request alone` } }
        : body.length
        ? {
            postData: {
              mimeType: cap.content_type ?? 'application/octet-stream',
              params: [],
              text: text ? body.toString('utf8') : body.toString('base64'),
              ...(text ? {} : { encoding: 'base64' }),
            },
          }
        : {}),
      headersSize: -1,
      bodySize: cap.size_bytes,
    },
    response: {
      status: ep.response_code,
      statusText: '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [{ name: 'Content-Type', value: ep.response_content_type }],
      content: { size: answer.length, mimeType: ep.response_content_type, text: ep.response_body },
      redirectURL: '',
      headersSize: -1,
      bodySize: answer.length,
      comment: "the endpoint's configured response",
    },
    cache: {},
    timings: { send: 0, wait: 0, receive: 0 },
    comment: `capture #${cap.id} from ${cap.ip_address}`,
  }
}

export function harLog(entries: ReturnType<typeof harEntry>[]) {
  return { log: { version: '1.2', creator: CREATOR, entries } }
}

/** The same document as harLog, written one entry at a time (the export of a set streams it). */
export async function* harLogStream(entries: AsyncIterable<ReturnType<typeof harEntry>>): AsyncGenerator<string> {
  const head = JSON.stringify(harLog([]))
  const cut = head.lastIndexOf('[]')
  yield head.slice(0, cut + 1)
  let first = true
  for await (const e of entries) {
    yield (first ? '' : ',') + JSON.stringify(e)
    first = false
  }
  yield head.slice(cut + 1)
}
