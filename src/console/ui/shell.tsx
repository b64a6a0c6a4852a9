// The layout every console shares: a skip link, the header with the product name, the navigation
// it is given and the account menu, the banner that says when the service cannot be reached, the
// main region and the live region for toasts.
import type { ComponentChildren } from 'preact'
import { apiDown } from './api.ts'
import { Toasts } from './toasts.tsx'

export interface NavItem {
  href: string
  label: string
  current?: boolean
}

export function Shell(props: { product: string; home: string; nav?: NavItem[]; navLabel?: string; account?: ComponentChildren; children: ComponentChildren }) {
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={props.home}>
          {props.product}
        </a>
        {props.account && <div class="account">{props.account}</div>}
      </header>
      {props.nav && props.nav.length > 0 && (
        <nav class="tabs" aria-label={props.navLabel ?? 'Sections'}>
          <ul>
            {props.nav.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={n.current ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <div class="banner-slot" role="alert">
        {apiDown.value && <p class="banner">The service cannot be reached (down or restarting). The console retries by itself every second and carries on when it is back.</p>}
      </div>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
      <Toasts />
    </>
  )
}
