// The invoice console: which screen a path shows, the navigation, and who may see what. Visitors
// get the demo editor at / (and /demo) and the sign-in; the other screens need a session and send
// a visitor to sign in first, then back.
import { useEffect } from 'preact/hooks'
import { Notice } from '../ui/page.tsx'
import { currentPath, matchRoute, navigate } from '../ui/router.ts'
import { Shell, type NavItem } from '../ui/shell.tsx'
import { AccountPage } from './account.tsx'
import { BatchPage, Batches } from './batches.tsx'
import { Editor } from './editor.tsx'
import { Invoices } from './invoices.tsx'
import { ReadEinvoice } from './read.tsx'
import { account, afterSignIn, sessionChecked, signOut } from './session.ts'
import { SignIn } from './sign-in.tsx'

const PUBLIC = new Set(['/', '/demo', '/sign-in'])

function screen(path: string, signedIn: boolean): preact.JSX.Element | null {
  if (path === '/') return <Editor demo={!signedIn} />
  if (path === '/demo') return <Editor demo />
  if (path === '/sign-in') return <SignIn />
  if (path === '/account') return <AccountPage />
  if (path === '/invoices') return <Invoices />
  if (path === '/batches') return <Batches />
  if (path === '/read') return <ReadEinvoice />
  const b = matchRoute('/batches/:id', path)
  if (b) return <BatchPage key={b.id} id={b.id!} />
  return null
}

export function App() {
  const path = currentPath.value
  const signedIn = !!account.value
  useEffect(() => {
    if (!sessionChecked.value) return
    if (!signedIn && !PUBLIC.has(path)) {
      afterSignIn.value = path + location.search
      navigate('/sign-in', true)
    } else if (signedIn && path === '/sign-in') {
      navigate(afterSignIn.value, true)
      afterSignIn.value = '/'
    }
  }, [signedIn, path, sessionChecked.value])

  const nav: NavItem[] = signedIn
    ? [
        { href: '/', label: 'Editor' },
        { href: '/invoices', label: 'Invoices' },
        { href: '/batches', label: 'Batches' },
        { href: '/read', label: 'Read an e-invoice' },
        { href: '/account', label: 'Account' },
      ]
    : [
        { href: '/', label: 'Demo editor' },
        { href: '/sign-in', label: 'Sign in or sign up' },
      ]
  for (const n of nav) n.current = n.href === '/' ? path === '/' || path === '/demo' : path === n.href || path.startsWith(`${n.href}/`)
  const accountMenu = signedIn ? (
    <>
      <span class="who">{account.value!.email}</span>
      <button type="button" class="small" onClick={() => signOut()}>
        Sign out
      </button>
    </>
  ) : null
  const shown = !sessionChecked.value ? null : signedIn || PUBLIC.has(path) ? screen(path, signedIn) : null
  return (
    <Shell product="Invoices" home="/" nav={nav} navLabel="Console" account={accountMenu}>
      {!sessionChecked.value ? (
        <p>Loading…</p>
      ) : (
        (shown ??
          (signedIn ? (
            <Notice kind="error">
              Nothing here. <a href="/">The editor</a>
            </Notice>
          ) : (
            <p>Loading…</p>
          )))
      )}
    </Shell>
  )
}
