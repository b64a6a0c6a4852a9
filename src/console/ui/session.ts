// A console's session with its service, the same in every console: an HttpOnly cookie the service
// sets in exchange for an API key (the page never stores the key) and the CSRF token, kept in
// memory and re-read from the service on each load. A key rotated in the console ends the session
// made with the old key, so the console signs in again with the new one at once. When a session
// ends (a revoked key), calls made together all fail and the service gives the reason to one of
// them only: the reason wins over the generic 401s, whichever arrives first.
import { signal } from '@preact/signals'
import { api, ApiError, handleUnauthorized, setCsrfToken } from './api.ts'
import { navigate } from './router.ts'

/** 401 messages that give no reason ("Not signed in", "Unauthorized: …"). */
const GENERIC = /^(Not signed in|Unauthorized)/

export interface SessionOptions {
  /** Where to go once signed in when no deep link asked for the session. */
  home: string
  /** Told every new CSRF token (null once signed out), besides the API client. */
  onCsrf?: (token: string | null) => void
}

export function createConsoleSession<A>(opts: SessionOptions) {
  const account = signal<A | null>(null)
  /** Why the last session ended (a revoked or rotated key), shown on the sign-in screen. */
  const endedBecause = signal<string | null>(null)
  const sessionChecked = signal(false)
  /** Where to go once signed in: the deep link that asked for a session, else the home screen. */
  const afterSignIn = signal(opts.home)
  let streamReason: string | null = null

  const csrf = (token: string | null) => {
    setCsrfToken(token)
    opts.onCsrf?.(token)
  }

  async function loadSession(): Promise<void> {
    try {
      const r = await api<{ account: A; csrf_token: string }>('GET', '/api/v1/console/session', { anonymous: true })
      csrf(r.data.csrf_token)
      account.value = r.data.account
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) throw e
      account.value = null
    } finally {
      sessionChecked.value = true
    }
  }

  async function signInWithKey(apiKey: string): Promise<void> {
    const r = await api<{ account: A; csrf_token: string }>('POST', '/api/v1/console/session', { body: { api_key: apiKey.trim() }, anonymous: true })
    csrf(r.data.csrf_token)
    endedBecause.value = null
    account.value = r.data.account
  }

  /** The service's signup answer (its API key, shown once by the caller). */
  async function signUp<T extends { api_key: string }>(email: string): Promise<T> {
    return (await api<T>('POST', '/api/v1/signup', { body: { email }, anonymous: true })).data
  }

  /** A new key (shown once by the caller); the session is renewed with it before anything else is asked. */
  async function rotateKey(): Promise<string> {
    const r = await api<{ api_key: string }>('POST', '/api/v1/account/key/rotate')
    await signInWithKey(r.data.api_key)
    return r.data.api_key
  }

  async function signOut(): Promise<void> {
    try {
      await api('DELETE', '/api/v1/console/session')
    } finally {
      csrf(null)
      account.value = null
      navigate('/sign-in')
    }
  }

  /** The session ended (a 401 of a signed-in call, or of a stream): back to sign-in, saying why. */
  function ended(answer: string): void {
    const message = GENERIC.test(answer) && streamReason ? streamReason : answer
    if (!account.value) {
      if (GENERIC.test(endedBecause.value ?? '') && !GENERIC.test(message)) endedBecause.value = message
      return
    }
    csrf(null)
    account.value = null
    endedBecause.value = message
    streamReason = null
    navigate('/sign-in', true)
  }

  /** Why the service ended a change stream (`ended`): the reason a later 401 may not repeat. */
  function noteStreamEnded(reason: string | undefined): void {
    streamReason = reason ?? null
  }

  handleUnauthorized(ended)
  return { account, endedBecause, sessionChecked, afterSignIn, loadSession, signInWithKey, signUp, rotateKey, signOut, ended, noteStreamEnded }
}
