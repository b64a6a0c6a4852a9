// The flags console's sign-in (the shared screen, src/console/ui/sign-in.tsx): an fb_ key, or a new
// account whose first session opens its project.
import { SignInScreen } from '../ui/sign-in.tsx'
import { afterSignIn, endedBecause, signInWithKey, signUp } from './session.ts'

export function SignIn() {
  return (
    <SignInScreen
      keyPrefix="fb_"
      prefixError="An API key starts with fb_"
      refused="That API key is not valid (or was revoked)."
      say={(e) => (e as Error).message}
      endedBecause={endedBecause}
      endedText={(reason) => (/^(Not signed in|Unauthorized)/.test(reason) ? 'Your session has ended (signed out elsewhere, expired, or its key was changed). Sign in again.' : reason)}
      signInWithKey={signInWithKey}
      signUp={signUp}
      newKeyText={() => 'It opens your account from scripts and from this console.'}
      openLabel="I have saved it: open the console"
      openAt={(created) => `/projects/${created.project.id}`}
      afterSignIn={afterSignIn}
    />
  )
}
