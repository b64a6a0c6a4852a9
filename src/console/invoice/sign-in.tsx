// Sign-in: paste an API key, or create an account (the key is shown once, with a copy button, then
// exchanged for a session). The key goes to the service once and is never kept by the page: the
// session is an HttpOnly cookie. Visitors can also go on with the demo editor.
import { useState } from 'preact/hooks'
import { ApiError } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { FormError, TextField } from '../ui/fields.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { endedBecause, signInWithKey, signUp } from './session.ts'
import { say } from './say.ts'

const APP = 'Invoices'

export function SignIn() {
  const [key, setKey] = useState('')
  const [keyError, setKeyError] = useState<string | null>(null)
  const [email, setEmail] = useState('')
  const [emailError, setEmailError] = useState<string | null>(null)
  const [created, setCreated] = useState<{ api_key: string; monthly_limit: number } | null>(null)
  const [busy, setBusy] = useState(false)
  const [formError, setFormError] = useState<string | null>(null)

  const useKey = async (k: string) => {
    setBusy(true)
    setKeyError(null)
    setFormError(null)
    try {
      await signInWithKey(k) // the app then opens afterSignIn
    } catch (e) {
      const msg = e instanceof ApiError && e.status === 401 ? 'That API key is not valid (or was replaced).' : say(e)
      if (created) setFormError(msg)
      else setKeyError(msg)
    } finally {
      setBusy(false)
    }
  }

  if (created)
    return (
      <Page title="Your API key" appName={APP}>
        <div class="keyshow">
          <p>
            <strong>Save this API key now: it is shown only once.</strong> It makes invoices from your scripts (Authorization: Bearer …) and opens this console. Your
            free plan makes {created.monthly_limit} invoices a month.
          </p>
          <CopyBlock text={created.api_key} what="API key" />
        </div>
        <FormError error={formError} />
        <p>
          <button class="primary" disabled={busy} onClick={() => useKey(created.api_key)}>
            I have saved it: open the editor
          </button>
        </p>
      </Page>
    )

  return (
    <Page title="Sign in" appName={APP}>
      {endedBecause.value && <Notice kind="warn">{endedBecause.value}</Notice>}
      <div class="side-by-side">
        <form
          class="card"
          aria-labelledby="with-key"
          onSubmit={(e) => {
            e.preventDefault()
            if (!key.trim().startsWith('dm_')) return setKeyError('An invoice API key starts with dm_')
            void useKey(key)
          }}
        >
          <h2 id="with-key">Sign in with your API key</h2>
          <TextField id="api-key" label="API key" type="password" autoComplete="off" spellcheck={false} required value={key} error={keyError} hint="The dm_… key you got when you signed up." onValue={setKey} />
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
              setCreated(await signUp(email.trim()))
            } catch (err) {
              setEmailError(say(err))
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
      <p>
        Or go on without an account: <a href="/demo">try the demo editor</a> (5 previews a minute, up to 20 lines).
      </p>
    </Page>
  )
}
