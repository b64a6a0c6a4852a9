// Sends one sender's test event (events.ts) to an endpoint's capture URL and says what the service
// answered. The service's own refusals (unknown endpoint, daily limit, too large) are JSON errors
// and mean nothing was captured; any other answer is the endpoint's configured response.
import { SENDERS, type Sender } from './events.ts'

export class NotCaptured extends Error {}

export interface Sent {
  url: string
  type: string
  status: number
  /** The id the capture was stored under (the answer's X-Capture-Id). */
  captureId?: number
}

export async function sendTestEvent(opts: { sender: Sender; token: string; secret: string; api: string; path?: string }): Promise<Sent> {
  const event = await SENDERS[opts.sender](opts.secret)
  const url = `${opts.api}/hook/${opts.token}${opts.path ?? event.subPath}`
  let r: Response
  try {
    r = await fetch(url, { method: 'POST', headers: event.headers, body: event.body })
  } catch (err) {
    throw new NotCaptured(`cannot reach ${opts.api}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`)
  }
  const text = await r.text()
  if ([404, 405, 413, 429].includes(r.status)) {
    let refusal: string | undefined
    try {
      refusal = (JSON.parse(text) as { error?: string }).error
    } catch {}
    if (refusal) throw new NotCaptured(`${refusal} (HTTP ${r.status}): the event was not captured`)
  }
  const captureId = r.headers.get('x-capture-id')
  return { url, type: event.type, status: r.status, ...(captureId ? { captureId: Number(captureId) } : {}) }
}
