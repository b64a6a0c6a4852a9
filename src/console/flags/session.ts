// The browser's session: an HttpOnly cookie the service sets in exchange for an API key (never
// stored by the page), and the CSRF token, kept in memory and re-read from the service on load.
import { signal } from '@preact/signals'
import { api, ApiError, handleUnauthorized, setCsrfToken } from '../ui/api.ts'
import { navigate } from '../ui/router.ts'
import type { Account } from './types.ts'

export const account = signal<Account | null>(null)
/** Why the last session ended (a revoked key), shown on the sign-in screen. */
export const endedBecause = signal<string | null>(null)
export const sessionChecked = signal(false)
/** Where to go once signed in: the deep link that asked for a session, else the projects. */
export const afterSignIn = signal('/projects')

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

export async function signUp(email: string): Promise<{ api_key: string; sdk_key: string; project: { id: string; name: string } }> {
  const r = await api('POST', '/api/v1/signup', { body: { email }, anonymous: true })
  return r.data
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

/** 401 messages that give no reason ("Not signed in", "Unauthorized: …"). */
const GENERIC = /^(Not signed in|Unauthorized)/

let streamReason: string | null = null
/** Why the service ended the project's change stream (`ended`): the reason a 401 may not repeat. */
export function noteStreamEnded(reason: string | undefined): void {
  streamReason = reason ?? null
}

handleUnauthorized((answer) => {
  const message = GENERIC.test(answer) && streamReason ? streamReason : answer
  if (!account.value) {
    // Calls made together all fail; the service gives the reason (a revoked key) to one of them
    // only and a generic 401 to the others, whichever answer arrives first: the reason wins.
    if (GENERIC.test(endedBecause.value ?? '') && !GENERIC.test(message)) endedBecause.value = message
    return
  }
  setCsrfToken(null)
  account.value = null
  endedBecause.value = message
  streamReason = null
  navigate('/sign-in', true)
})
