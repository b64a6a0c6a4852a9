// The webhooks console in Chromium for the console-webhooks-* tests: one webhook service (with
// workers, so forwards, retries and recoveries really run), one browser per test file, pages
// signed in by a session cookie made through the API (the sign-in form itself is tested once).
// CSP violations, screenshots and viewports are test/helpers/console.ts's.
import { openConsoleWithKey, startServiceConsole, type ConsolePage, type ConsoleRig } from './console.ts'

export type WebhooksRig = ConsoleRig
export type WebhooksPage = ConsolePage

/** The webhook service with workers (forwards, retries and recoveries really run). */
export const startWebhooksConsole = (opts: { workers?: boolean; env?: Record<string, string> } = {}) => startServiceConsole('webhooks', { workers: opts.workers ?? true, env: opts.env })

/** A browser context on the console; signed in with `apiKey` when given. */
export const openWebhooksConsole = openConsoleWithKey
