// The flags console: which screen a path shows, the project's navigation, and the sign-in gate.
import { useEffect } from 'preact/hooks'
import { seg } from '../ui/api.ts'
import { Notice } from '../ui/page.tsx'
import { currentPath, matchRoute, navigate } from '../ui/router.ts'
import { Shell, type NavItem } from '../ui/shell.tsx'
import { ChangeWebhooks } from './change-webhooks.tsx'
import { EnvironmentsKeys } from './environments-keys.tsx'
import { FlagHistory } from './history.tsx'
import { FlagList } from './flag-list.tsx'
import { FlagPage } from './flag-page.tsx'
import { Playground } from './playground.tsx'
import { openProject, project, projectError } from './project-data.ts'
import { ProjectHistory } from './project-history.tsx'
import { Projects } from './projects.tsx'
import { Segments } from './segments.tsx'
import { account, afterSignIn, sessionChecked, signOut } from './session.ts'
import { SignIn } from './sign-in.tsx'
import { FlagUsage } from './usage.tsx'

type Screen = (p: Record<string, string>) => preact.JSX.Element

const PROJECT_ROUTES: Array<[string, Screen]> = [
  ['/projects/:id', (p) => <FlagList id={p.id!} />],
  ['/projects/:id/flags', (p) => <FlagList id={p.id!} />],
  ['/projects/:id/flags/:key', (p) => <FlagPage key={p.key} id={p.id!} flagKey={p.key!} />],
  ['/projects/:id/flags/:key/history', (p) => <FlagHistory id={p.id!} flagKey={p.key!} />],
  ['/projects/:id/flags/:key/usage', (p) => <FlagUsage id={p.id!} flagKey={p.key!} />],
  ['/projects/:id/playground', (p) => <Playground id={p.id!} />],
  ['/projects/:id/segments', (p) => <Segments id={p.id!} />],
  ['/projects/:id/environments', (p) => <EnvironmentsKeys id={p.id!} />],
  ['/projects/:id/webhooks', (p) => <ChangeWebhooks id={p.id!} />],
  ['/projects/:id/history', (p) => <ProjectHistory id={p.id!} />],
]

function route(path: string): { screen: preact.JSX.Element | null; projectId: string | null } {
  if (path === '/projects') return { screen: <Projects />, projectId: null }
  for (const [pattern, screen] of PROJECT_ROUTES) {
    const params = matchRoute(pattern, path)
    if (params) return { screen: screen(params), projectId: params.id! }
  }
  return { screen: null, projectId: null }
}

function projectNav(id: string, path: string): NavItem[] {
  const root = `/projects/${seg(id)}`
  const items: NavItem[] = [
    { href: root, label: 'Flags', current: path === root || path.startsWith(`${root}/flags`) },
    { href: `${root}/playground`, label: 'Playground' },
    { href: `${root}/segments`, label: 'Segments' },
    { href: `${root}/environments`, label: 'Environments & keys' },
    { href: `${root}/webhooks`, label: 'Webhooks' },
    { href: `${root}/history`, label: 'History' },
  ]
  for (const i of items) i.current ??= path === i.href
  return items
}

export function App() {
  const path = currentPath.value
  const signedIn = !!account.value
  const { screen, projectId } = signedIn ? route(path) : { screen: null, projectId: null }
  useEffect(() => {
    if (!sessionChecked.value) return
    if (!signedIn && path !== '/sign-in') {
      if (path !== '/') afterSignIn.value = path + location.search
      navigate('/sign-in', true)
    } else if (signedIn && (path === '/' || path === '/sign-in')) {
      navigate(afterSignIn.value, true)
      afterSignIn.value = '/projects'
    }
  }, [signedIn, path, sessionChecked.value])
  useEffect(() => openProject(projectId), [projectId])

  const accountMenu = signedIn ? (
    <>
      <a href="/projects">Projects</a>
      <span class="who">{account.value!.email}</span>
      <button type="button" class="small" onClick={() => signOut()}>
        Sign out
      </button>
    </>
  ) : null
  const nav = projectId ? projectNav(projectId, path) : undefined
  return (
    <Shell product={projectId && project.value ? `Flags · ${project.value.name}` : 'Flags console'} home={signedIn ? '/projects' : '/sign-in'} nav={nav} navLabel="Project" account={accountMenu}>
      {!sessionChecked.value ? (
        <p>Loading…</p>
      ) : !signedIn ? (
        <SignIn />
      ) : projectError.value && projectId ? (
        <Notice kind="error">
          {projectError.value} <a href="/projects">All projects</a>
        </Notice>
      ) : (
        (screen ?? (
          <Notice kind="error">
            Nothing here. <a href="/projects">All projects</a>
          </Notice>
        ))
      )}
    </Shell>
  )
}
