// Short confirmations ("Saved", "Copied") announced through one polite live region, so a screen
// reader hears them without focus moving; each disappears after a few seconds.
import { signal } from '@preact/signals'

interface Toast {
  id: number
  text: string
  kind: 'ok' | 'error'
}
export const toasts = signal<Toast[]>([])
let next = 0

export function toast(text: string, kind: 'ok' | 'error' = 'ok'): void {
  const id = ++next
  toasts.value = [...toasts.value.slice(-3), { id, text, kind }]
  setTimeout(() => (toasts.value = toasts.value.filter((t) => t.id !== id)), 6000)
}

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.value.map((t) => (
        <p key={t.id} class={`toast toast-${t.kind}`}>
          {t.text}
        </p>
      ))}
    </div>
  )
}
