// Dialogs on the native <dialog> element opened with showModal(): the browser traps focus, Escape
// closes, the page behind is inert, and focus returns to the button that opened it.
import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

export function Dialog(props: { open: boolean; title: string; onClose: () => void; children: ComponentChildren; class?: string }) {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (props.open && !d.open) {
      const opener = document.activeElement as HTMLElement | null
      d.showModal()
      const back = () => opener?.focus?.()
      d.addEventListener('close', back, { once: true })
    } else if (!props.open && d.open) d.close()
    // After every render, not only when `open` changes: Escape closes the native dialog before the
    // parent's state says so, and a reopen in the same batch (closed, then opened again before a
    // render) leaves `open` true → true, which a dependency on it would never see.
  })
  return (
    <dialog ref={ref} class={`dialog ${props.class ?? ''}`} aria-labelledby="dialog-title" onClose={props.onClose} onCancel={props.onClose}>
      {props.open && (
        <>
          <h2 id="dialog-title">{props.title}</h2>
          {props.children}
        </>
      )}
    </dialog>
  )
}

/** Asks before something that cannot be undone; the text names what is lost. */
export function ConfirmDialog(props: {
  open: boolean
  title: string
  confirmLabel: string
  danger?: boolean
  busy?: boolean
  error?: string | null
  onConfirm: () => void
  onClose: () => void
  children: ComponentChildren
}) {
  return (
    <Dialog open={props.open} title={props.title} onClose={props.onClose}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault()
          props.onConfirm()
        }}
      >
        <div class="dialog-body">{props.children}</div>
        {props.error && (
          <p class="form-error" role="alert">
            {props.error}
          </p>
        )}
        <div class="buttons">
          <button type="submit" class={props.danger ? 'danger' : 'primary'} disabled={props.busy}>
            {props.confirmLabel}
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  )
}
