// A screen's frame: its h1 (which takes focus after an in-app navigation, so keyboard and
// screen-reader users land on the new content) and the document title.
import type { ComponentChildren } from 'preact'
import { useLayoutEffect, useRef } from 'preact/hooks'
import { navigated } from './router.ts'

export function Page(props: { title: string; appName?: string; actions?: ComponentChildren; children: ComponentChildren }) {
  const h1 = useRef<HTMLHeadingElement>(null)
  useLayoutEffect(() => {
    document.title = `${props.title} · ${props.appName ?? 'Flags console'}`
    if (navigated.value) h1.current?.focus()
  }, [props.title])
  return (
    <section class="page" aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title" tabIndex={-1} ref={h1}>
          {props.title}
        </h1>
        {props.actions && <div class="page-actions">{props.actions}</div>}
      </div>
      {props.children}
    </section>
  )
}

/** A message in place of content: loading, empty, or an error with the API's words. */
export function Notice(props: { kind?: 'info' | 'error' | 'warn'; children: ComponentChildren }) {
  const kind = props.kind ?? 'info'
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : undefined}>
      {props.children}
    </div>
  )
}
