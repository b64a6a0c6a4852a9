// A change webhook's new signing secret (POST …/webhooks/{webhook}/secret/rotate): a confirmation
// that says what happens to the current secret, then the new one in the same dialog, shown once
// with its copy button (the key-shown-once block of the other screens). Shown in the dialog rather
// than on the page so focus stays with it: the copy button takes focus when the secret arrives.
import { useEffect, useState } from 'preact/hooks'
import { api, seg } from '../ui/api.ts'
import { CopyBlock } from '../ui/copy.tsx'
import { Dialog } from '../ui/dialog.tsx'
import { toast } from '../ui/toasts.tsx'
import type { Webhook } from './types.ts'

export function RotateSecretDialog({ url, webhook, onClose, onRotated }: { url: string; webhook: Webhook | null; onClose: () => void; onRotated: () => void }) {
  const [secret, setSecret] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => {
    setSecret(null)
    setError(null)
  }, [webhook?.id])
  useEffect(() => {
    if (secret) (document.querySelector('dialog .keyshow button.copy') as HTMLElement | null)?.focus()
  }, [secret])
  const close = () => {
    setSecret(null)
    onClose()
  }

  return (
    <Dialog open={!!webhook} title={secret ? 'New signing secret' : "Rotate this webhook's signing secret?"} onClose={close}>
      {secret ? (
        <>
          <div class="keyshow" role="status">
            <p>
              <strong>New signing secret of {webhook?.url}, shown only once:</strong> copy it to your receiver now. The old secret signs nothing from now on.
            </p>
            <CopyBlock text={secret} what="signing secret" />
          </div>
          <div class="buttons">
            <button type="button" class="primary" onClick={close}>
              Done
            </button>
          </div>
        </>
      ) : (
        <form
          method="dialog"
          onSubmit={async (e) => {
            e.preventDefault()
            setBusy(true)
            setError(null)
            try {
              const r = await api<Webhook>('POST', `${url}/${seg(webhook!.id)}/secret/rotate`)
              setSecret(r.data.secret!)
              toast(`New signing secret for ${r.data.url}`)
              onRotated()
            } catch (err) {
              setError((err as Error).message)
            } finally {
              setBusy(false)
            }
          }}
        >
          <div class="dialog-body">
            <p>
              {webhook?.url} gets a new secret, shown once. The current one (<code>{webhook?.secret_hint}</code>) stops signing at once: until your receiver has the new
              secret it refuses the deliveries, which are retried for about 8.5 minutes.
            </p>
          </div>
          {error && (
            <p class="form-error" role="alert">
              {error}
            </p>
          )}
          <div class="buttons">
            <button type="submit" class="danger" disabled={busy}>
              Rotate secret
            </button>
            <button type="button" onClick={close}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Dialog>
  )
}
