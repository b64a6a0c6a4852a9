// The webhooks console's session with the webhook service (src/console/ui/session.ts): signed in,
// it opens the endpoints unless a deep link asked for the session.
import { createConsoleSession } from '../ui/session.ts'
import type { Account } from './types.ts'

const session = createConsoleSession<Account>({ home: '/endpoints' })

export const { account, endedBecause, sessionChecked, afterSignIn, loadSession, signInWithKey, rotateKey, signOut } = session
export const signUp = (email: string) => session.signUp<{ api_key: string; plan: string }>(email)
