// A small history router on signals: the current path, navigate(), route matching with named
// parameters, and one click handler that turns same-origin links into client-side navigation
// (deep links still work because the service answers every console path with the same page).
import { signal } from '@preact/signals'

export const currentPath = signal(typeof location === 'undefined' ? '/' : location.pathname)
export const currentQuery = signal(typeof location === 'undefined' ? '' : location.search)
/** False for the first screen (focus stays at the top), true after an in-app navigation. */
export const navigated = signal(false)

export function navigate(to: string, replace = false): void {
  const url = new URL(to, location.origin)
  if (replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  navigated.value = true
  currentQuery.value = url.search
  currentPath.value = url.pathname
}

/** Params of `pattern` (`/projects/:id/flags/:key`) in `path`, or null when it does not match. */
export function matchRoute(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean)
  const s = path.split('/').filter(Boolean)
  if (p.length !== s.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) params[p[i]!.slice(1)] = decodeURIComponent(s[i]!)
    else if (p[i] !== s[i]) return null
  }
  return params
}

export function startRouter(): void {
  addEventListener('popstate', () => {
    navigated.value = true
    currentQuery.value = location.search
    currentPath.value = location.pathname
  })
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    const a = (e.target as Element).closest?.('a')
    if (!a || a.target || a.hasAttribute('download')) return
    const url = new URL(a.href, location.href)
    if (url.origin !== location.origin || url.pathname.startsWith('/api/')) return
    e.preventDefault()
    navigate(url.pathname + url.search)
  })
}
