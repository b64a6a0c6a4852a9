// The preview beside the form: the rendered PDF in a frame of its blob: URL (the console's policy
// allows frames of blob: URLs and nothing else), or the XML itself for XRechnung and UBL, whose
// document is the XML. Each PDF gets a new frame, so previews add no entries to the tab's history.
import { signal } from '@preact/signals'
import { Notice } from '../ui/page.tsx'
import { preview } from './preview.ts'

/** The blob: URL whose frame has finished loading (the preview is on screen). */
export const loadedUrl = signal<string | null>(null)

/** `current`: the draft's request as JSON; until a render of it settles, the preview is busy. */
export function PreviewPane(props: { current: string }) {
  const p = preview.value
  const busy = p.settledBody !== props.current
  const status = busy ? 'Rendering…' : p.status === 'shown' && (p.xml !== null || loadedUrl.value === p.url) ? 'Up to date.' : ''
  return (
    <section class="preview-pane" aria-labelledby="preview-title" aria-busy={busy ? 'true' : undefined}>
      <div class="preview-head">
        <h2 id="preview-title">Preview</h2>
        <p class="preview-status muted" role="status">
          {status}
        </p>
      </div>
      {p.error && <Notice kind="warn">{p.error}</Notice>}
      {p.url && (
        <>
          <iframe key={p.url} class="preview-frame" title="Invoice preview (PDF)" src={`${p.url}#navpanes=0&view=FitH`} data-loaded={loadedUrl.value === p.url ? 'true' : undefined} onLoad={() => (loadedUrl.value = p.url)} />
          <p class="hint">
            <a href={p.url} target="_blank" rel="noopener">
              Open the preview in a new tab
            </a>{' '}
            (phones show PDFs there).
          </p>
        </>
      )}
      {p.xml !== null && (
        <pre class="xml-preview" tabIndex={0} aria-label="The e-invoice XML">
          {p.xml}
        </pre>
      )}
      {!p.url && p.xml === null && !p.error && <p class="muted">The preview appears here as you type.</p>}
    </section>
  )
}
