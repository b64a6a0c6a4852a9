// The invoice console's session with the invoice service (src/console/ui/session.ts). Visitors
// without a session are not sent away: they get the public demo editor. Downloads made outside the
// API client (files.ts) carry the same CSRF token and end the session the same way on a 401.
import { createConsoleSession } from '../ui/session.ts'
import { handleFileUnauthorized, setFileCsrf } from './files.ts'

export interface Account {
  id: string
  email: string
  plan: string
}

const session = createConsoleSession<Account>({ home: '/', onCsrf: setFileCsrf })
handleFileUnauthorized(session.ended)

export const { account, endedBecause, sessionChecked, afterSignIn, loadSession, signInWithKey, rotateKey, signOut } = session
export const signUp = (email: string) => session.signUp<{ api_key: string; plan: string; monthly_limit: number }>(email)
