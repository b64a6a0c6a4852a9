// The provider's sync options and status, on their own so that the package's public types (its
// .d.ts) refer to nothing of the engine: scripts/build.mjs refuses declarations that reach outside
// this folder.

export interface SyncOptions {
  /** The flag service's origin, e.g. http://localhost:3002. */
  url: string
  /** A server SDK key (fbsrv_…). */
  serverKey: string
  /** Where the last good copy is saved, and read from when the service is unreachable at start. */
  cacheFile?: string
  /** How often the set is polled (with its ETag) while the change stream is down; default 10 s. */
  pollIntervalMs?: number
  /** Follow the change stream (default true); false: polling only. */
  stream?: boolean
  /** Per request; default 5 s. */
  requestTimeoutMs?: number
  /** Longest wait between stream reconnects (they back off from 250 ms); default 5 s. */
  maxStreamRetryMs?: number
}

export interface SyncStatus {
  /** Where the copy in use came from: the service, the saved file, or nothing yet. */
  source: 'service' | 'file' | 'none'
  /** The copy's tag (the flag set's ETag without quotes), or null. */
  etag: string | null
  /** When the copy was last known to be the service's current set (ISO), or null. */
  confirmedAt: string | null
  /** How long ago that was, in ms: 0 while the change stream is connected and the copy current. */
  stalenessMs: number | null
  /** The change stream is connected (changes arrive within about a second). */
  streaming: boolean
  /** The last attempt to reach the service failed. */
  unreachable: boolean
  /** Why, when it did. */
  lastError: string | null
}
