// The flags console's session with the flags service (src/console/ui/session.ts): signed in, it
// opens the projects unless a deep link asked for the session.
import { createConsoleSession } from '../ui/session.ts'
import type { Account } from './types.ts'

const session = createConsoleSession<Account>({ home: '/projects' })

export const { account, endedBecause, sessionChecked, afterSignIn, loadSession, signInWithKey, rotateKey, signOut, noteStreamEnded } = session
export const signUp = (email: string) => session.signUp<{ api_key: string; sdk_key: string; project: { id: string; name: string } }>(email)
