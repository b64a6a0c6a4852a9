// How OFREP answers point a provider at the change stream: ADR-0008's `eventStreams` entries. The
// URL carries the SDK key because a browser's EventSource cannot send an Authorization header
// (docs/flags-evaluation.md, "Change stream"); the key is the caller's own, sent in the request just answered.
import type { Config } from '../../platform/config.ts'
import { STREAM_PATH } from './stream-routes.ts'

/** Providers close the stream after this long in a hidden tab and re-fetch on return (ADR-0008's default). */
export const INACTIVITY_DELAY_SEC = 120

export type EventStreamEntry =
  | { type: 'sse'; url: string; inactivityDelaySec: number }
  | { type: 'sse'; endpoint: { requestUri: string }; inactivityDelaySec: number }

export function eventStreamsFor(sdkKey: string, config: Pick<Config, 'FLAGS_PUBLIC_URL'>): EventStreamEntry[] {
  const requestUri = `${STREAM_PATH}?sdk_key=${encodeURIComponent(sdkKey)}`
  // Behind a proxy the public origin is configured; otherwise the provider's own OFREP base origin.
  if (config.FLAGS_PUBLIC_URL) return [{ type: 'sse', url: new URL(requestUri, config.FLAGS_PUBLIC_URL).toString(), inactivityDelaySec: INACTIVITY_DELAY_SEC }]
  return [{ type: 'sse', endpoint: { requestUri }, inactivityDelaySec: INACTIVITY_DELAY_SEC }]
}
