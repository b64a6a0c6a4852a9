// Dialogs on the native <dialog> element opened with showModal(): the browser traps focus, Escape
// closes, the page behind is inert, and focus returns to the button that opened it.
import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

/** One showModal() until its close: whether the parent has already been told that it closed. */
type Shown = { told: boolean }

export function Dialog(props: { open: boolean; title: string; onClose: () => void; children: ComponentChildren; class?: string }) {
  const ref = useRef<HTMLDialogElement>(null)
  const shown = useRef<Shown | null>(null)
  const onClose = useRef(props.onClose)
  onClose.current = props.onClose
  const tell = (s: Shown | null) => {
    if (!s || s.told) return
    s.told = true
    onClose.current()
  }
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (props.open && !d.open) {
      const opener = document.activeElement as HTMLElement | null
      const s: Shown = { told: false }
      shown.current = s
      d.showModal()
      // The browser queues the close event as a task of its own, and input runs first on a busy
      // machine: Escape, then Enter on the opener can reopen the dialog before the close event of
      // the first one arrives. That event belongs to its own showModal() and is told at most once,
      // so it never closes the reopened dialog.
      d.addEventListener(
        'close',
        () => {
          tell(s)
          if (!d.open) opener?.focus?.()
        },
        { once: true },
      )
    } else if (!props.open && d.open) {
      if (shown.current) shown.current.told = true
      d.close()
    }
    // After every render, not only when `open` changes: Escape closes the native dialog before the
    // parent's state says so, and a reopen in the same batch (closed, then opened again before a
    // render) leaves `open` true → true, which a dependency on it would never see.
  })
  return (
    // cancel (Escape, a close request) is told at once; the close event only when cancel was
    // skipped (Chrome skips it for a repeated close request without user activation).
    <dialog ref={ref} class={`dialog ${props.class ?? ''}`} aria-labelledby="dialog-title" onCancel={() => tell(shown.current)}>
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
