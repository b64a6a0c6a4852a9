// The links between a flag's three screens (targeting, history, usage) and back to the list.
import { seg } from '../ui/api.ts'
import { currentPath } from '../ui/router.ts'

export function FlagTabs({ id, flagKey }: { id: string; flagKey: string }) {
  const root = `/projects/${id}/flags/${seg(flagKey)}`
  const items = [
    { href: root, label: 'Targeting' },
    { href: `${root}/history`, label: 'History' },
    { href: `${root}/usage`, label: 'Usage' },
  ]
  return (
    <>
      <p class="crumbs">
        <a href={`/projects/${id}`}>All flags</a>
      </p>
      <nav class="tabs" aria-label="This flag">
        <ul>
          {items.map((i) => (
            <li key={i.href}>
              <a href={i.href} aria-current={currentPath.value === i.href ? 'page' : undefined}>
                {i.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
    </>
  )
}
