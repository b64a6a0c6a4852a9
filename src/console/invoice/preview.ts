// The live preview: after each pause in typing the draft is rendered by the service — POST
// /invoice/preview when signed in (not counted against the month, 60 a minute), the public
// /demo-invoice for visitors (5 a minute per address) — and shown beside the form. A newer edit
// aborts the render still running; an answer that is not the newest is dropped. Refusals are put at
// their fields (errors.ts); a 429 says when the next preview comes and retries then by itself.
import { signal } from '@preact/signals'
import { FileError, postJsonForFile } from './files.ts'
import { parseProblems, problems } from './errors.ts'

/** Pause after the last keystroke before rendering: signed in, and for the demo's scarce budget. */
export const DEBOUNCE_MS = 250
export const DEMO_DEBOUNCE_MS = 1200

export interface PreviewState {
  status: 'idle' | 'rendering' | 'shown' | 'error'
  /** blob: URL of the PDF shown, or null. */
  url: string | null
  /** The XML shown for XRechnung and UBL (the document itself is the preview). */
  xml: string | null
  error: string | null
  /** The body that was rendered (JSON), so Download of a demo can hand over the same file. */
  renderedBody: string | null
  /** The last body whose render has settled, rendered or refused: the preview is busy while the draft's differs. */
  settledBody: string | null
  blob: Blob | null
}

export const preview = signal<PreviewState>({ status: 'idle', url: null, xml: null, error: null, renderedBody: null, settledBody: null, blob: null })

let timer: ReturnType<typeof setTimeout> | null = null
let running: AbortController | null = null
let seq = 0
let lastBody = ''

export function previewEndpoint(signedIn: boolean): string {
  return signedIn ? '/api/v1/invoice/preview' : '/api/v1/demo-invoice'
}

/** Schedules a render of `body` (the draft's request) after the pause; the same body twice renders once. */
export function schedulePreview(body: Record<string, unknown>, signedIn: boolean, now = false): void {
  const json = JSON.stringify(body)
  if (json === lastBody && !now) return
  lastBody = json
  if (timer) clearTimeout(timer)
  timer = setTimeout(() => void render(json, signedIn), now ? 0 : signedIn ? DEBOUNCE_MS : DEMO_DEBOUNCE_MS)
}

function retryMessage(e: FileError, signedIn: boolean): string {
  const when = e.retryAfter ? ` The preview comes back in ${e.retryAfter} s by itself.` : ''
  if (!signedIn)
    return `The demo renders 5 previews a minute per visitor and they are used up (the service said: “${e.message}”).${when} Sign up for free for your own invoices: 60 previews a minute and downloads.`
  return `${e.message}${when}`
}

async function render(json: string, signedIn: boolean): Promise<void> {
  running?.abort()
  const ctl = new AbortController()
  running = ctl
  const mine = ++seq
  preview.value = { ...preview.value, status: 'rendering' }
  try {
    const file = await postJsonForFile(previewEndpoint(signedIn), JSON.parse(json), ctl.signal)
    if (mine !== seq) return
    problems.value = []
    const old = preview.value.url
    if (file.type === 'application/xml') {
      preview.value = { status: 'shown', url: null, xml: await file.blob.text(), error: null, renderedBody: json, settledBody: json, blob: file.blob }
    } else {
      const url = URL.createObjectURL(file.blob)
      preview.value = { status: 'shown', url, xml: null, error: null, renderedBody: json, settledBody: json, blob: file.blob }
    }
    // The frame has the new document by now or in a moment; the old blob is no longer shown.
    if (old) setTimeout(() => URL.revokeObjectURL(old), 5_000)
  } catch (e) {
    if ((e as Error).name === 'AbortError' || mine !== seq) return
    const err = e as FileError
    if (err.status === 400) {
      problems.value = parseProblems(err.message)
      preview.value = { ...preview.value, settledBody: json, status: 'error', error: 'The preview shows the last version the service could render: fix the fields marked in the form.' }
    } else if (err.status === 429 || err.status === 503) {
      preview.value = { ...preview.value, settledBody: json, status: 'error', error: retryMessage(err, signedIn) }
      if (err.retryAfter) {
        lastBody = ''
        timer = setTimeout(() => schedulePreview(JSON.parse(json), signedIn, true), err.retryAfter * 1000)
      }
    } else preview.value = { ...preview.value, settledBody: json, status: 'error', error: err.message }
  } finally {
    if (running === ctl) running = null
  }
}

/** Forgets the last body, so the next schedule renders again (after signing in or out). */
export function resetPreview(): void {
  lastBody = ''
}
