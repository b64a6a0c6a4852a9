// Download buttons: PDF, Factur-X (a PDF with its XML inside), XRechnung and UBL (XML). Signed in,
// each is a POST /invoice of the draft with its format — a real invoice, counted and listed, the
// very bytes the API gives for that JSON. Visitors download through the demo (its budget of 5 a
// minute): the PDF just previewed is handed over without asking again.
import { useState } from 'preact/hooks'
import { toast } from '../ui/toasts.tsx'
import { draft, toRequest } from './draft.ts'
import { parseProblems, problems } from './errors.ts'
import { FileError, postJsonForFile, saveBlob } from './files.ts'
import { preview } from './preview.ts'

export const FORMATS = [
  { value: 'pdf', label: 'PDF', ext: 'pdf' },
  { value: 'facturx', label: 'Factur-X', ext: 'pdf' },
  { value: 'xrechnung', label: 'XRechnung', ext: 'xml' },
  { value: 'ubl', label: 'UBL', ext: 'xml' },
] as const

/** The body a download of `format` sends: the draft's request with that format. */
export function downloadBody(format: string): Record<string, unknown> {
  const body = toRequest(draft.value)
  delete body.format
  return format === 'pdf' ? body : { ...body, format }
}

export function Downloads(props: { signedIn: boolean }) {
  const [busy, setBusy] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const download = async (format: string, ext: string) => {
    setBusy(format)
    setError(null)
    const body = downloadBody(format)
    const name = `${String(body.invoice_number ?? 'invoice').replace(/[^0-9A-Za-z._-]/g, '_')}${format === 'pdf' ? '' : `-${format}`}.${ext}`
    try {
      const p = preview.value
      if (!props.signedIn && p.blob && p.renderedBody === JSON.stringify(body)) {
        saveBlob(p.blob, name)
      } else {
        const file = await postJsonForFile(props.signedIn ? '/api/v1/invoice' : '/api/v1/demo-invoice', body)
        saveBlob(file.blob, name)
      }
      toast(`Downloaded ${name}${props.signedIn ? ' (counted in this month’s invoices)' : ''}`)
    } catch (e) {
      const err = e as FileError
      if (err.status === 400) {
        problems.value = parseProblems(err.message)
        setError(`The service refused the ${format} invoice: see the fields marked in red.`)
      } else if (err.status === 429 && props.signedIn && /Monthly limit/.test(err.message)) {
        setError(`${err.message} Plans and upgrades are on the Account page.`)
      } else setError(err.retryAfter ? `${err.message} Try again in ${err.retryAfter} s.` : err.message)
    } finally {
      setBusy(null)
    }
  }
  return (
    <section class="downloads" aria-labelledby="download-title">
      <h2 id="download-title">Download</h2>
      <div class="buttons">
        {FORMATS.map((f) => (
          <button key={f.value} type="button" class={f.value === (draft.value.format || 'pdf') ? 'primary' : ''} disabled={busy !== null} onClick={() => download(f.value, f.ext)}>
            {busy === f.value ? `Making ${f.label}…` : `Download ${f.label}`}
          </button>
        ))}
      </div>
      {error && (
        <p class="form-error" role="alert">
          {error}
          {/Account page/.test(error) && (
            <>
              {' '}
              <a href="/account">Open Account</a>
            </>
          )}
        </p>
      )}
      {!props.signedIn && <p class="hint">Demo downloads come from the same 5-a-minute budget as the preview.</p>}
    </section>
  )
}
