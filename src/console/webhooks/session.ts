// The browser's session with the webhook service: an HttpOnly cookie the service sets in exchange
// for an API key (the page never stores the key), and the CSRF token, kept in memory and re-read
// from the service on each load. A key rotated in the console ends the session made with the old
// key, so the console signs in again with the new one at once.
import { signal } from '@preact/signals'
import { api, ApiError, handleUnauthorized, setCsrfToken } from '../ui/api.ts'
import { navigate } from '../ui/router.ts'
import type { Account } from './types.ts'

export const account = signal<Account | null>(null)
/** Why the last session ended (a revoked key), shown on the sign-in screen. */
export const endedBecause = signal<string | null>(null)
export const sessionChecked = signal(false)
/** Where to go once signed in: the deep link that asked for a session, else the endpoints. */
export const afterSignIn = signal('/endpoints')

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

export async function signUp(email: string): Promise<{ api_key: string; plan: string }> {
  const r = await api('POST', '/api/v1/signup', { body: { email }, anonymous: true })
  return r.data
}

/** A new key (shown once by the caller); the session is renewed with it before anything else is asked. */
export async function rotateKey(): Promise<string> {
  const r = await api<{ api_key: string }>('POST', '/api/v1/account/key/rotate')
  await signInWithKey(r.data.api_key)
  return r.data.api_key
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

handleUnauthorized((message) => {
  if (!account.value) return
  setCsrfToken(null)
  account.value = null
  endedBecause.value = message
  navigate('/sign-in', true)
})
