// A copy-to-clipboard button: the Clipboard API where the page may use it, else a selection of a
// hidden text area (http on a LAN address has no Clipboard API); the result is announced.
import { useState } from 'preact/hooks'
import { toast } from './toasts.tsx'

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const t = document.createElement('textarea')
    t.value = text
    t.setAttribute('readonly', '')
    t.className = 'offscreen'
    document.body.append(t)
    t.select()
    const ok = document.execCommand('copy')
    t.remove()
    return ok
  }
}

export function CopyButton(props: { text: string; label?: string; what?: string }) {
  const [done, setDone] = useState(false)
  return (
    <button
      type="button"
      class="copy"
      aria-label={props.what ? `Copy ${props.what}` : undefined}
      onClick={async () => {
        const ok = await copyText(props.text)
        setDone(ok)
        toast(ok ? `Copied${props.what ? ` ${props.what}` : ''}` : 'Could not copy: select the text and copy it', ok ? 'ok' : 'error')
        setTimeout(() => setDone(false), 2000)
      }}
    >
      {done ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  )
}

/** A secret or snippet shown in full, selectable, with its copy button. */
export function CopyBlock(props: { text: string; what: string; multiline?: boolean }) {
  return (
    <div class="copy-block">
      {props.multiline ? <pre tabIndex={0}><code>{props.text}</code></pre> : <code class="secret">{props.text}</code>}
      <CopyButton text={props.text} what={props.what} />
    </div>
  )
}
