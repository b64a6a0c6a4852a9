// The sign-in screen every console shows: paste an API key, or create an account (the key is shown
// once, with a copy button, and then exchanged for a session). The key goes to the service once
// and is never kept by the page: the session is an HttpOnly cookie. Each console gives its words,
// its key prefix and what to say about a new key.
import type { ComponentChildren } from 'preact'
import type { Signal } from '@preact/signals'
import { useState } from 'preact/hooks'
import { ApiError } from './api.ts'
import { CopyBlock } from './copy.tsx'
import { FormError, TextField } from './fields.tsx'
import { Notice, Page } from './page.tsx'

export interface SignInProps<T extends { api_key: string }> {
  appName?: string
  /** The service's key prefix (`fb_`), checked before anything is sent. */
  keyPrefix: string
  /** What the page says of a key without that prefix. */
  prefixError: string
  /** What the page says of a key the service refuses (401). */
  refused: string
  /** The console's wording of any other failure. */
  say: (e: unknown) => string
  endedBecause: Signal<string | null>
  /** How the reason a session ended reads on this screen (default: as the service said it). */
  endedText?: (reason: string) => string
  signInWithKey: (key: string) => Promise<void>
  signUp: (email: string) => Promise<T>
  /** The sentences beside a new key (what it opens; the plan's limit). */
  newKeyText: (created: T) => ComponentChildren
  openLabel: string
  /** Where a new account's first session opens (default: the console's home or the deep link). */
  openAt?: (created: T) => string
  afterSignIn?: Signal<string>
  children?: ComponentChildren
}

export function SignInScreen<T extends { api_key: string }>(props: SignInProps<T>) {
  const [key, setKey] = useState('')
  const [keyError, setKeyError] = useState<string | null>(null)
  const [email, setEmail] = useState('')
  const [emailError, setEmailError] = useState<string | null>(null)
  const [created, setCreated] = useState<T | null>(null)
  const [busy, setBusy] = useState(false)
  const [formError, setFormError] = useState<string | null>(null)

  const useKey = async (k: string, then?: string) => {
    setBusy(true)
    setKeyError(null)
    setFormError(null)
    try {
      if (then && props.afterSignIn) props.afterSignIn.value = then
      await props.signInWithKey(k) // the app then opens afterSignIn
    } catch (e) {
      const msg = e instanceof ApiError && e.status === 401 ? props.refused : props.say(e)
      if (created) setFormError(msg)
      else setKeyError(msg)
    } finally {
      setBusy(false)
    }
  }

  if (created)
    return (
      <Page title="Your API key" appName={props.appName}>
        <div class="keyshow">
          <p>
            <strong>Save this API key now: it is shown only once.</strong> {props.newKeyText(created)}
          </p>
          <CopyBlock text={created.api_key} what="API key" />
        </div>
        <FormError error={formError} />
        <p>
          <button class="primary" disabled={busy} onClick={() => useKey(created.api_key, props.openAt?.(created))}>
            {props.openLabel}
          </button>
        </p>
      </Page>
    )

  const ended = props.endedBecause.value
  return (
    <Page title="Sign in" appName={props.appName}>
      {ended && <Notice kind="warn">{props.endedText ? props.endedText(ended) : ended}</Notice>}
      <div class="side-by-side">
        <form
          class="card"
          aria-labelledby="with-key"
          onSubmit={(e) => {
            e.preventDefault()
            if (!key.trim().startsWith(props.keyPrefix)) return setKeyError(props.prefixError)
            void useKey(key)
          }}
        >
          <h2 id="with-key">Sign in with your API key</h2>
          <TextField id="api-key" label="API key" type="password" autoComplete="off" spellcheck={false} required value={key} error={keyError} hint={`The ${props.keyPrefix}… key you got when you signed up.`} onValue={setKey} />
          <button type="submit" class="primary" disabled={busy}>
            Sign in
          </button>
        </form>
        <form
          class="card"
          aria-labelledby="new-account"
          onSubmit={async (e) => {
            e.preventDefault()
            setBusy(true)
            setEmailError(null)
            try {
              setCreated(await props.signUp(email.trim()))
            } catch (err) {
              setEmailError(props.say(err))
            } finally {
              setBusy(false)
            }
          }}
        >
          <h2 id="new-account">Create an account</h2>
          <TextField id="email" label="E-mail" type="email" autoComplete="email" required value={email} error={emailError} onValue={setEmail} />
          <button type="submit" disabled={busy}>
            Sign up
          </button>
        </form>
      </div>
      {props.children}
    </Page>
  )
}
