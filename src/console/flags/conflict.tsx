// The panel of an edit the service refused with 412 (someone changed the thing meanwhile): its
// message, their version as the screen shows it, and the two ways on: reload (their version, my
// edits dropped) or re-apply (my change sent again on their version). Shared by the flag page, the
// segment editor, the project rename and the allowed-origins editor, so a conflict reads the same
// everywhere.
import type { ComponentChildren } from 'preact'

export function ConflictPanel(props: {
  /** "this flag", "the allowed origins"… */
  thing: string
  message: string
  /** What the user tried, when the screen has several changes (the flag page's toggles, saves…). */
  change?: string
  heading?: 'h2' | 'h3'
  busy?: boolean
  onReload: () => void
  onReapply: () => void
  /** Their version, as the screen shows it. */
  children?: ComponentChildren
}) {
  const H = props.heading ?? 'h3'
  return (
    <div class="conflict" role="alert">
      <H>Someone else changed {props.thing}</H>
      <p>{props.message}</p>
      {props.children}
      <p>
        Your change{props.change ? ` (“${props.change}”)` : ''} was <strong>not applied</strong>. Reload to see their version (drops your edits), or apply your change on top of it.
      </p>
      <div class="buttons">
        <button type="button" onClick={props.onReload}>
          Reload (drop my change)
        </button>
        <button type="button" class="primary" disabled={props.busy} onClick={props.onReapply}>
          Re-apply my change
        </button>
      </div>
    </div>
  )
}
