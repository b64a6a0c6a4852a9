// Environments and their keys: create an environment (its client SDK key shown once), rename one
// (environment-rename.tsx), rotate or revoke the client and server keys (a new key is shown once,
// with a copy button), delete an environment, the SDK snippets (OpenFeature server provider,
// in-process provider, web provider) with the key just revealed filled in, and under the web
// provider the origins allowed to use it (allowed-origins.tsx).
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, seg } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { SelectField, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { TableWrap } from '../ui/table.tsx'
import { toast } from '../ui/toasts.tsx'
import { AllowedOrigins } from './allowed-origins.tsx'
import { RenameEnvironmentDialog } from './environment-rename.tsx'
import { base, environments, reloadProject } from './project-data.ts'
import { environmentNameProblem } from './settings-checks.ts'
import type { Environment } from './types.ts'

type Revealed = Record<string, { client?: string; server?: string }>
interface Pending {
  title: string
  text: string
  label: string
  run: () => Promise<void>
}

export function snippets(origin: string, client: string, server: string) {
  return {
    server: `// OpenFeature server SDK + the OFREP provider: each check is one request to the service
import { OpenFeature } from '@openfeature/server-sdk'
import { OFREPProvider } from '@openfeature/ofrep-provider'

await OpenFeature.setProviderAndWait(new OFREPProvider({
  baseUrl: '${origin}',
  headers: [['Authorization', 'Bearer ${client}']],
}))
const client = OpenFeature.getClient()
const on = await client.getBooleanValue('my-flag', false, { targetingKey: 'user-42' })`,
    inProcess: `// In-process provider: the rules are evaluated in your process, kept current by the change stream
import { OpenFeature } from '@openfeature/server-sdk'
import { QueueworksProvider } from '@queueworks/openfeature-provider'

const provider = new QueueworksProvider({ url: '${origin}', serverKey: '${server}' })
await OpenFeature.setProviderAndWait(provider)
const client = OpenFeature.getClient()
const on = await client.getBooleanValue('my-flag', false, { targetingKey: 'user-42' })`,
    web: `// In a web page: the OFREP web provider with the client-side SDK key
import { OpenFeature } from '@openfeature/web-sdk'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'

await OpenFeature.setProviderAndWait(new OFREPWebProvider({
  baseUrl: '${origin}',
  headers: [['Authorization', 'Bearer ${client}']],
  pollInterval: 30_000,
}))
await OpenFeature.setContext({ targetingKey: 'user-42' })
const on = OpenFeature.getClient().getBooleanValue('my-flag', false)`,
  }
}

export function EnvironmentsKeys({ id }: { id: string }) {
  const envs = environments.value
  const [revealed, setRevealed] = useState<Revealed>({})
  const [name, setName] = useState('')
  const [nameError, setNameError] = useState<string | null>(null)
  const [pending, setPending] = useState<Pending | null>(null)
  const [pendingError, setPendingError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [snippetEnv, setSnippetEnv] = useState('production')
  const [renaming, setRenaming] = useState<string | null>(null)
  // The renamed row is drawn anew (its button that opened the dialog is gone): focus goes to its
  // Rename button once the list has the new name, rather than falling to the page.
  const [renamedTo, setRenamedTo] = useState<string | null>(null)
  useEffect(() => {
    if (!renamedTo || !envs.some((e) => e.name === renamedTo)) return
    ;(document.querySelector(`button[aria-label="Rename ${renamedTo}"]`) as HTMLElement | null)?.focus()
    setRenamedTo(null)
  }, [renamedTo, envs])
  const envUrl = (env: string) => `${base(id)}/environments/${seg(env)}`
  const reveal = (env: string, k: { client?: string; server?: string }) => setRevealed((r) => ({ ...r, [env]: { ...r[env], ...k } }))

  const ask = (p: Pending) => {
    setPending(p)
    setPendingError(null)
  }
  const rotateClient = (e: Environment) =>
    ask({
      title: `Rotate the client SDK key of ${e.name}?`,
      text: `A new key replaces ${e.sdk_key_hint}; the old one stops working within about a second, so pages and apps using it get no flags until they have the new one.`,
      label: 'Rotate client key',
      run: async () => {
        const r = e.name === 'production' ? await api<{ sdk_key: string }>('POST', `${base(id)}/sdk-key/rotate`) : await api<{ sdk_key: string }>('POST', `${envUrl(e.name)}/sdk-key/rotate`)
        reveal(e.name, { client: r.data.sdk_key })
        setSnippetEnv(e.name)
      },
    })
  const rotateServer = (e: Environment) =>
    ask({
      title: `${e.server_key_hint ? 'Rotate' : 'Create'} the server key of ${e.name}?`,
      text: e.server_key_hint ? `A new key replaces ${e.server_key_hint}; servers using the old one lose access within about a second.` : 'A server key reads the whole flag set (for the in-process provider). Keep it on servers.',
      label: e.server_key_hint ? 'Rotate server key' : 'Create server key',
      run: async () => {
        const r = await api<{ server_key: string }>('POST', `${envUrl(e.name)}/server-key/rotate`)
        reveal(e.name, { server: r.data.server_key })
        setSnippetEnv(e.name)
      },
    })
  const revokeServer = (e: Environment) =>
    ask({
      title: `Revoke the server key of ${e.name}?`,
      text: `${e.server_key_hint} stops working within about a second; no new key is made until you create one.`,
      label: 'Revoke server key',
      run: async () => {
        await api('DELETE', `${envUrl(e.name)}/server-key`)
        reveal(e.name, { server: undefined })
      },
    })
  const remove = (e: Environment) =>
    ask({
      title: `Delete the environment ${e.name}?`,
      text: `Every flag's state in ${e.name} (on/off, rules, default) is dropped, its keys (${e.sdk_key_hint}${e.server_key_hint ? `, ${e.server_key_hint}` : ''}) are revoked and its change webhooks deleted. It cannot be undone.`,
      label: 'Delete environment',
      run: async () => {
        await api('DELETE', envUrl(e.name))
      },
    })

  const sEnv = envs.find((e) => e.name === snippetEnv) ?? envs[0]
  const client = (sEnv && revealed[sEnv.name]?.client) ?? `${sEnv?.sdk_key_hint ?? 'fbsdk_…'} (rotate to reveal the whole key)`
  const server = (sEnv && revealed[sEnv.name]?.server) ?? (sEnv?.server_key_hint ? `${sEnv.server_key_hint} (rotate to reveal the whole key)` : 'fbsrv_… (create a server key above)')
  const sn = snippets(location.origin, client, server)

  return (
    <Page title="Environments and keys">
      <TableWrap label="Environments">
        <table>
          <caption>Environments: each has its own client SDK key (for pages and apps) and server key (for the in-process provider)</caption>
          <thead>
            <tr>
              <th scope="col">Environment</th>
              <th scope="col">Client SDK key</th>
              <th scope="col">Server key</th>
              <th scope="col" class="hide-narrow">
                Created
              </th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {envs.map((e) => (
              <tr key={e.name}>
                <th scope="row">{e.name}</th>
                <td>
                  <code>{e.sdk_key_hint}</code>
                </td>
                <td>{e.server_key_hint ? <code>{e.server_key_hint}</code> : <span class="muted">none</span>}</td>
                <td class="hide-narrow">
                  <Time iso={e.created_at} />
                </td>
                <td>
                  <div class="row">
                    <button type="button" class="small" aria-label={`Rotate client key of ${e.name}`} onClick={() => rotateClient(e)}>
                      Rotate client key
                    </button>
                    <button type="button" class="small" aria-label={`${e.server_key_hint ? 'Rotate' : 'Create'} server key of ${e.name}`} onClick={() => rotateServer(e)}>
                      {e.server_key_hint ? 'Rotate server key' : 'Create server key'}
                    </button>
                    {e.server_key_hint && (
                      <button type="button" class="small" aria-label={`Revoke server key of ${e.name}`} onClick={() => revokeServer(e)}>
                        Revoke server key
                      </button>
                    )}
                    {e.name !== 'production' && (
                      <button type="button" class="small" aria-label={`Rename ${e.name}`} onClick={() => setRenaming(e.name)}>
                        Rename
                      </button>
                    )}
                    {e.name !== 'production' && (
                      <button type="button" class="small" aria-label={`Delete ${e.name}`} onClick={() => remove(e)}>
                        Delete
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <p class="muted">production cannot be renamed or deleted: the project's own SDK key and the flag endpoints without ?environment= act on it.</p>
      {Object.entries(revealed).map(([env, k]) =>
        k.client || k.server ? (
          <div class="keyshow" key={env} role="status">
            <p>
              <strong>New keys of {env}, shown only once:</strong> copy them now.
            </p>
            {k.client && <CopyBlock text={k.client} what={`client SDK key of ${env}`} />}
            {k.server && <CopyBlock text={k.server} what={`server key of ${env}`} />}
          </div>
        ) : null,
      )}
      <form
        class="card"
        aria-labelledby="new-env"
        onSubmit={async (ev) => {
          ev.preventDefault()
          const problem = environmentNameProblem(name)
          if (problem) return setNameError(problem)
          setNameError(null)
          try {
            const r = await api<{ name: string; sdk_key: string }>('POST', `${base(id)}/environments`, { body: { name } })
            reveal(r.data.name, { client: r.data.sdk_key })
            setSnippetEnv(r.data.name)
            setName('')
            toast(`Environment ${r.data.name} created`)
            await reloadProject(id)
          } catch (err) {
            setNameError((err as Error).message)
          }
        }}
      >
        <h2 id="new-env">New environment</h2>
        <div class="inline-fields">
          <TextField id="env-name" class="grow" label="Name" required maxLength={32} value={name} error={nameError} placeholder="staging" onValue={setName} />
          <button type="submit" class="primary">
            Create environment
          </button>
        </div>
      </form>
      <h2>Use it from your code</h2>
      <SelectField id="snippet-env" label="Environment" value={sEnv?.name ?? ''} options={envs.map((e) => ({ value: e.name, label: e.name }))} onValue={setSnippetEnv} />
      {!revealed[sEnv?.name ?? '']?.client && <Notice>Keys are shown only when made: rotate a key to fill it in below.</Notice>}
      <h3>OpenFeature server provider (OFREP, Node)</h3>
      <CopyBlock text={sn.server} what="server provider snippet" multiline />
      <h3>In-process provider (evaluates locally)</h3>
      <CopyBlock text={sn.inProcess} what="in-process provider snippet" multiline />
      <h3>Web provider (browser)</h3>
      <CopyBlock text={sn.web} what="web provider snippet" multiline />
      <AllowedOrigins id={id} />
      <RenameEnvironmentDialog
        id={id}
        env={renaming}
        onClose={() => setRenaming(null)}
        onRenamed={(from, to) => {
          // What was shown under the old name (a key just made, the snippets' choice) follows it.
          setSnippetEnv((s) => (s === from ? to : s))
          setRenamedTo(to)
          setRevealed(({ [from]: keys, ...rest }) => (keys ? { ...rest, [to]: keys } : rest))
        }}
      />
      <ConfirmDialog
        open={!!pending}
        title={pending?.title ?? ''}
        confirmLabel={pending?.label ?? ''}
        danger
        busy={busy}
        error={pendingError}
        onClose={() => setPending(null)}
        onConfirm={async () => {
          setBusy(true)
          try {
            await pending!.run()
            toast(`${pending!.label}: done`)
            setPending(null)
            await reloadProject(id)
          } catch (err) {
            setPendingError(err instanceof ApiError ? err.message : String(err))
          } finally {
            setBusy(false)
          }
        }}
      >
        <p>{pending?.text}</p>
      </ConfirmDialog>
    </Page>
  )
}
