// Renaming an environment (PATCH …/environments/{name}): its keys stay the same and evaluate under
// the new name, and every flag's state moves with it. The name is checked as the API checks it
// before sending; what only the service knows (a name already taken, 409) comes back as its own
// message under the field. production is never offered: the API refuses to rename it.
import { useState } from 'preact/hooks'
import { api, seg } from '../ui/api.ts'
import { Dialog } from '../ui/dialog.tsx'
import { TextField } from '../ui/fields.tsx'
import { toast } from '../ui/toasts.tsx'
import { base, reloadProject } from './project-data.ts'
import { ENVIRONMENT_NAME_HINT, environmentNameProblem } from './settings-checks.ts'

interface Props {
  id: string
  /** The environment to rename; null: the dialog is closed. */
  env: string | null
  onClose: () => void
  onRenamed: (from: string, to: string) => void
}

export function RenameEnvironmentDialog(props: Props) {
  // The form is drawn only while open, so each opening starts from the environment's name.
  return (
    <Dialog open={!!props.env} title={`Rename the environment ${props.env ?? ''}`} onClose={props.onClose}>
      {props.env && <RenameForm {...props} from={props.env} />}
    </Dialog>
  )
}

function RenameForm(props: Props & { from: string }) {
  const { from } = props
  const [name, setName] = useState(from)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault()
        const to = name.trim()
        const problem = environmentNameProblem(to)
        if (problem) return setError(problem)
        if (to === from) return props.onClose()
        setBusy(true)
        setError(null)
        try {
          await api('PATCH', `${base(props.id)}/environments/${seg(from)}`, { body: { name: to } })
          toast(`Environment ${from} renamed to ${to}`)
          props.onRenamed(from, to)
          props.onClose()
          await reloadProject(props.id)
        } catch (err) {
          setError((err as Error).message)
        } finally {
          setBusy(false)
        }
      }}
    >
      <TextField
        id="rename-env"
        label="New name"
        required
        maxLength={32}
        autoComplete="off"
        spellcheck={false}
        value={name}
        error={error}
        hint={`${ENVIRONMENT_NAME_HINT}. Its SDK and server keys stay the same and now evaluate under the new name; every flag's state and change webhook of it moves along. Code that names ${from} keeps the old name: change it too.`}
        onValue={setName}
      />
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          Rename environment
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  )
}
