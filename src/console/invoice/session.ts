// The browser's session with the invoice service: an HttpOnly cookie the service sets in exchange
// for an API key (never stored by the page) and the CSRF token, kept in memory and re-read on load.
// Visitors without a session are not sent away: they get the public demo editor.
import { signal } from '@preact/signals'
import { api, ApiError, handleUnauthorized, setCsrfToken as setApiCsrf } from '../ui/api.ts'
import { navigate } from '../ui/router.ts'
import { handleFileUnauthorized, setFileCsrf } from './files.ts'

function setCsrfToken(token: string | null): void {
  setApiCsrf(token)
  setFileCsrf(token)
}

export interface Account {
  id: string
  email: string
  plan: string
}

export const account = signal<Account | null>(null)
/** Why the last session ended (a revoked or rotated key), shown on the sign-in screen. */
export const endedBecause = signal<string | null>(null)
export const sessionChecked = signal(false)
/** Where to go once signed in: the deep link that asked for a session, else the editor. */
export const afterSignIn = signal('/')

interface SessionAnswer {
  account: Account
  csrf_token: string
}

export async function loadSession(): Promise<void> {
  try {
    const r = await api<SessionAnswer>('GET', '/api/v1/console/session', { anonymous: true })
    setCsrfToken(r.data.csrf_token)
    account.value = r.data.account
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 401) throw e
    account.value = null
  } finally {
    sessionChecked.value = true
  }
}

export async function signInWithKey(apiKey: string): Promise<void> {
  const r = await api<SessionAnswer>('POST', '/api/v1/console/session', { body: { api_key: apiKey.trim() }, anonymous: true })
  setCsrfToken(r.data.csrf_token)
  endedBecause.value = null
  account.value = r.data.account
}

export async function signUp(email: string): Promise<{ api_key: string; plan: string; monthly_limit: number }> {
  return (await api('POST', '/api/v1/signup', { body: { email }, anonymous: true })).data
}

export async function signOut(): Promise<void> {
  try {
    await api('DELETE', '/api/v1/console/session')
  } finally {
    setCsrfToken(null)
    account.value = null
    navigate('/sign-in')
  }
}

function ended(message: string): void {
  if (!account.value) return
  setCsrfToken(null)
  account.value = null
  endedBecause.value = message
  navigate('/sign-in', true)
}
handleUnauthorized(ended)
handleFileUnauthorized(ended)
