// The invoice console's sign-in (the shared screen, src/console/ui/sign-in.tsx): a dm_ key, or a
// new account (told its free plan's monthly invoices); visitors can also go on with the demo editor.
import { SignInScreen } from '../ui/sign-in.tsx'
import { say } from './say.ts'
import { endedBecause, signInWithKey, signUp } from './session.ts'

const APP = 'Invoices'

export function SignIn() {
  return (
    <SignInScreen
      appName={APP}
      keyPrefix="dm_"
      prefixError="An invoice API key starts with dm_"
      refused="That API key is not valid (or was replaced)."
      say={say}
      endedBecause={endedBecause}
      signInWithKey={signInWithKey}
      signUp={signUp}
      newKeyText={(created) => `It makes invoices from your scripts (Authorization: Bearer …) and opens this console. Your free plan makes ${created.monthly_limit} invoices a month.`}
      openLabel="I have saved it: open the editor"
    >
      <p>
        Or go on without an account: <a href="/demo">try the demo editor</a> (5 previews a minute, up to 20 lines).
      </p>
    </SignInScreen>
  )
}
