// The webhooks console's sign-in (the shared screen, src/console/ui/sign-in.tsx): a wv_ key, or a
// new account.
import { SignInScreen } from '../ui/sign-in.tsx'
import { APP } from './app-name.ts'
import { say } from './say.ts'
import { endedBecause, signInWithKey, signUp } from './session.ts'

export function SignIn() {
  return (
    <SignInScreen
      appName={APP}
      keyPrefix="wv_"
      prefixError="An API key of this service starts with wv_"
      refused="That API key is not valid (or was replaced)."
      say={say}
      endedBecause={endedBecause}
      signInWithKey={signInWithKey}
      signUp={signUp}
      newKeyText={() => (
        <>
          It opens your account from scripts, the <code>listen</code> CLI and this console.
        </>
      )}
      openLabel="I have saved it: open the console"
    />
  )
}
