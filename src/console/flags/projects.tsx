// Projects: the account's projects with their flag counts; create (the new production SDK key is
// shown once), rename (with If-Match: a name someone else changed meanwhile gets the conflict
// panel, reload or re-apply), and delete after a confirmation that names everything that goes with it.
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, reconnects, seg } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { ConfirmDialog, Dialog } from '../ui/dialog.tsx'
import { FormError, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { TableWrap } from '../ui/table.tsx'
import { toast } from '../ui/toasts.tsx'
import { ConflictPanel } from './conflict.tsx'
import type { Project } from './types.ts'

export function Projects() {
  const [list, setList] = useState<Project[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [name, setName] = useState('')
  const [nameError, setNameError] = useState<string | null>(null)
  const [created, setCreated] = useState<{ name: string; id: string; sdk_key: string } | null>(null)
  const [renaming, setRenaming] = useState<Project | null>(null)
  const [newName, setNewName] = useState('')
  const [renameError, setRenameError] = useState<string | null>(null)
  /** A rename refused with 412: their project as it is now, and the name I tried. */
  const [renameConflict, setRenameConflict] = useState<{ message: string; current: Project | null; name: string } | null>(null)
  const [deleting, setDeleting] = useState<Project | null>(null)
  const [confirmName, setConfirmName] = useState('')
  const [deleteError, setDeleteError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const load = async () => {
    try {
      setList((await api<{ projects: Project[] }>('GET', '/api/v1/projects')).data.projects)
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    }
  }
  useEffect(() => void load(), [reconnects.value])

  /** Renames on version `v` (If-Match); a 412 shows the conflict in the dialog, with the name kept to re-apply. */
  const rename = async (to: string, v: number | null) => {
    setBusy(true)
    setRenameError(null)
    try {
      await api('PATCH', `/api/v1/projects/${seg(renaming!.id)}`, { body: { name: to }, ifMatch: v })
      toast(`Renamed to ${to}`)
      setRenaming(null)
      setRenameConflict(null)
      await load()
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        const cur = err.body?.current as Project | undefined
        setRenameConflict({ message: err.message, current: cur && typeof cur.version === 'number' ? cur : null, name: to })
      } else setRenameError((err as Error).message)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Page title="Projects">
      {error && <Notice kind="error">{error}</Notice>}
      {created && (
        <div class="keyshow" role="status">
          <p>
            Project <strong>{created.name}</strong> created. Its production SDK key, shown only once:
          </p>
          <CopyBlock text={created.sdk_key} what="SDK key" />
          <a href={`/projects/${created.id}`}>Open {created.name}</a>
        </div>
      )}
      {list && (
        <TableWrap label="Projects">
          <table>
            <caption>
              {list.length} project{list.length === 1 ? '' : 's'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" class="num">
                  Flags
                </th>
                <th scope="col" class="hide-narrow">
                  SDK key
                </th>
                <th scope="col" class="hide-narrow">
                  Created
                </th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.map((p) => (
                <tr key={p.id}>
                  <th scope="row">
                    <a href={`/projects/${p.id}`}>{p.name}</a>
                  </th>
                  <td class="num">{p.flag_count}</td>
                  <td class="hide-narrow">
                    <code>{p.sdk_key_hint}</code>
                  </td>
                  <td class="hide-narrow">
                    <Time iso={p.created_at} />
                  </td>
                  <td>
                    <div class="row">
                      <button
                        type="button"
                        class="small"
                        aria-label={`Rename ${p.name}`}
                        onClick={() => {
                          setRenaming(p)
                          setNewName(p.name)
                          setRenameError(null)
                          setRenameConflict(null)
                        }}
                      >
                        Rename
                      </button>
                      <button
                        type="button"
                        class="small"
                        aria-label={`Delete ${p.name}`}
                        onClick={() => {
                          setDeleting(p)
                          setConfirmName('')
                          setDeleteError(null)
                        }}
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      <form
        class="card"
        aria-labelledby="new-project"
        onSubmit={async (e) => {
          e.preventDefault()
          setNameError(null)
          if (!name.trim()) return setNameError('Give the project a name')
          setBusy(true)
          try {
            const r = await api<Project & { sdk_key: string }>('POST', '/api/v1/projects', { body: { name: name.trim() } })
            setCreated({ name: r.data.name, id: r.data.id, sdk_key: r.data.sdk_key })
            setName('')
            await load()
          } catch (err) {
            setNameError((err as Error).message)
          } finally {
            setBusy(false)
          }
        }}
      >
        <h2 id="new-project">New project</h2>
        <div class="inline-fields">
          <TextField id="project-name" class="grow" label="Project name" required maxLength={100} value={name} error={nameError} onValue={setName} />
          <button type="submit" class="primary" disabled={busy}>
            Create project
          </button>
        </div>
      </form>

      <Dialog open={!!renaming} title={`Rename ${renaming?.name ?? ''}`} onClose={() => setRenaming(null)}>
        {renameConflict && (
          <ConflictPanel
            thing="this project"
            message={renameConflict.message}
            busy={busy}
            onReload={() => {
              if (renameConflict.current) {
                setRenaming(renameConflict.current)
                setNewName(renameConflict.current.name)
              }
              setRenameConflict(null)
              void load()
            }}
            onReapply={() => rename(renameConflict.name, renameConflict.current?.version ?? null)}
          >
            {renameConflict.current && <p>Its name now: {renameConflict.current.name}</p>}
          </ConflictPanel>
        )}
        <form
          onSubmit={(e) => {
            e.preventDefault()
            if (!newName.trim()) return setRenameError('Give the project a name')
            void rename(newName.trim(), renaming!.version ?? null)
          }}
        >
          <TextField id="rename-project" label="New name" required maxLength={100} value={newName} error={renameError} onValue={setNewName} />
          <div class="buttons">
            <button type="submit" class="primary">
              Rename
            </button>
            <button type="button" onClick={() => setRenaming(null)}>
              Cancel
            </button>
          </div>
        </form>
      </Dialog>

      <ConfirmDialog
        open={!!deleting}
        title={`Delete project ${deleting?.name ?? ''}?`}
        confirmLabel="Delete project for good"
        danger
        busy={busy || confirmName !== deleting?.name}
        error={deleteError}
        onClose={() => setDeleting(null)}
        onConfirm={async () => {
          setBusy(true)
          try {
            await api('DELETE', `/api/v1/projects/${seg(deleting!.id)}`)
            toast(`Project ${deleting!.name} deleted`)
            setDeleting(null)
            await load()
          } catch (err) {
            setDeleteError(err instanceof ApiError ? err.message : String(err))
          } finally {
            setBusy(false)
          }
        }}
      >
        <p>
          This deletes <strong>{deleting?.flag_count ?? 0} flag{deleting?.flag_count === 1 ? '' : 's'}</strong> with their rules in every environment, the project's environments and
          their SDK and server keys (applications using them stop getting flags), its segments, change webhooks and audit history. It cannot be undone.
        </p>
        <FormError error={null} />
        <TextField id="confirm-project-name" label={`Type the project's name (${deleting?.name ?? ''}) to confirm`} value={confirmName} autoComplete="off" onValue={setConfirmName} />
      </ConfirmDialog>
    </Page>
  )
}
