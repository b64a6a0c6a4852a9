// The invoice console in Chromium for the console-invoice-* tests: one invoice service with its
// workers (previews and downloads are real renders), one browser per test file, accounts made
// through the API and pages signed in with a session cookie (the sign-in form itself is tested in
// test/console-invoice-flows.test.ts). Page reports (CSP, errors) and screenshots: helpers/console.ts.
import { openConsoleWithKey, startServiceConsole, type ConsoleRig } from './console.ts'
import { post } from './http.ts'

/** The invoice service with its workers (previews and downloads are real renders). */
export const startInvoiceConsole = (opts: { env?: Record<string, string> } = {}) => startServiceConsole('invoice', { workers: true, env: opts.env })

let n = 0
/** A new invoice account through the API: its key. */
export async function invoiceAccount(rig: ConsoleRig): Promise<{ key: string; email: string }> {
  const email = `console-invoice-${Date.now()}-${n++}@example.com`
  const r = await post(`${rig.root}/api/v1/signup`, { email })
  if (r.status !== 200) throw new Error(`signup: ${r.status} ${r.text}`)
  return { key: r.json.api_key, email }
}

/** A browser context on the console, signed in with `key` when given; CSP violations and errors recorded. */
export const openInvoiceConsole = openConsoleWithKey
