// The webhooks console: which screen a path shows, the navigation, and the sign-in gate.
import { useEffect } from 'preact/hooks'
import { Notice } from '../ui/page.tsx'
import { currentPath, matchRoute, navigate } from '../ui/router.ts'
import { Shell, type NavItem } from '../ui/shell.tsx'
import { AccountPage } from './account.tsx'
import { EndpointPage } from './endpoint-page.tsx'
import { Endpoints } from './endpoints.tsx'
import { account, afterSignIn, sessionChecked, signOut } from './session.ts'
import { SignIn } from './sign-in.tsx'

function route(path: string): preact.JSX.Element | null {
  if (path === '/endpoints') return <Endpoints />
  if (path === '/account') return <AccountPage />
  const p = matchRoute('/endpoints/:token', path)
  return p ? <EndpointPage key={p.token} token={p.token!} /> : null
}

export function App() {
  const path = currentPath.value
  const signedIn = !!account.value
  useEffect(() => {
    if (!sessionChecked.value) return
    if (!signedIn && path !== '/sign-in') {
      if (path !== '/') afterSignIn.value = path + location.search
      navigate('/sign-in', true)
    } else if (signedIn && (path === '/' || path === '/sign-in')) {
      navigate(afterSignIn.value, true)
      afterSignIn.value = '/endpoints'
    }
  }, [signedIn, path, sessionChecked.value])

  const nav: NavItem[] | undefined = signedIn
    ? [
        { href: '/endpoints', label: 'Endpoints', current: path === '/endpoints' || path.startsWith('/endpoints/') },
        { href: '/account', label: 'Account', current: path === '/account' },
      ]
    : undefined
  const accountMenu = signedIn ? (
    <>
      <span class="who">
        {account.value!.email} · {account.value!.plan}
      </span>
      <button type="button" class="small" onClick={() => signOut()}>
        Sign out
      </button>
    </>
  ) : null
  const screen = signedIn ? route(path) : null
  return (
    <Shell product="Webhooks console" home={signedIn ? '/endpoints' : '/sign-in'} nav={nav} navLabel="Console" account={accountMenu}>
      {!sessionChecked.value ? (
        <p>Loading…</p>
      ) : !signedIn ? (
        <SignIn />
      ) : (
        (screen ?? (
          <Notice kind="error">
            Nothing here. <a href="/endpoints">All endpoints</a>
          </Notice>
        ))
      )}
    </Shell>
  )
}
