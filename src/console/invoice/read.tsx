// A received e-invoice (UBL or CII XML, or a Factur-X / ZUGFeRD PDF) dropped on the page or chosen
// with the file button: POST /einvoice/read answers what it states and the findings of the rules
// it declares; the readable PDF (?output=pdf) is shown and can be saved; or the invoice goes into
// the editor (its request is the body POST /invoice takes). Each read counts as one invoice.
import { useState } from 'preact/hooks'
import { Notice, Page } from '../ui/page.tsx'
import { navigate } from '../ui/router.ts'
import { TableWrap } from '../ui/table.tsx'
import { APP } from './account.tsx'
import { draft, fromRequest } from './draft.ts'
import { fetchFile, saveBlob, type FileError } from './files.ts'

interface Finding {
  rule: string
  severity: string
  message: string
  bt?: string
  stated?: string
  computed?: string
}
interface ReadAnswer {
  source?: string
  attachment?: string
  invoice: Record<string, any>
  findings: Finding[]
}

async function kindOf(file: File): Promise<string> {
  const head = new Uint8Array(await file.slice(0, 5).arrayBuffer())
  return String.fromCharCode(...head) === '%PDF-' ? 'application/pdf' : 'application/xml'
}

export function ReadEinvoice() {
  const [file, setFile] = useState<File | null>(null)
  const [result, setResult] = useState<ReadAnswer | null>(null)
  const [pdf, setPdf] = useState<{ url: string; blob: Blob; name: string } | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [over, setOver] = useState(false)

  const read = async (f: File, output: 'json' | 'pdf') => {
    setBusy(true)
    setError(null)
    try {
      const answer = await fetchFile(`/api/v1/einvoice/read${output === 'pdf' ? '?output=pdf' : ''}`, { body: f, contentType: await kindOf(f) })
      if (output === 'pdf') {
        if (pdf) URL.revokeObjectURL(pdf.url)
        setPdf({ url: URL.createObjectURL(answer.blob), blob: answer.blob, name: answer.filename ?? 'received.pdf' })
      } else setResult(JSON.parse(await answer.blob.text()))
    } catch (e) {
      setError((e as FileError).message)
    } finally {
      setBusy(false)
    }
  }
  const choose = (f: File | undefined) => {
    if (!f) return
    setFile(f)
    setResult(null)
    if (pdf) URL.revokeObjectURL(pdf.url)
    setPdf(null)
    void read(f, 'json')
  }
  const errors = result?.findings.filter((x) => x.severity === 'error') ?? []
  return (
    <Page title="Read a received e-invoice" appName={APP}>
      <div
        class={`dropzone ${over ? 'over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault()
          setOver(true)
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault()
          setOver(false)
          choose(e.dataTransfer?.files[0])
        }}
      >
        <p>Drop an XRechnung, UBL, CII or Factur-X / ZUGFeRD file here, or</p>
        <label for="einvoice-file">Received e-invoice file</label>{' '}
        <input id="einvoice-file" type="file" accept=".xml,.pdf,application/xml,text/xml,application/pdf" onChange={(e) => choose((e.currentTarget as HTMLInputElement).files?.[0])} />
        <p class="hint">Each read counts as one invoice of the month.</p>
      </div>
      {busy && <p role="status">Reading {file?.name}…</p>}
      {error && <Notice kind="error">{error}</Notice>}
      {result && (
        <section aria-labelledby="read-title">
          <h2 id="read-title">
            {file?.name}: invoice {result.invoice.invoice_number ?? '(no number)'}
          </h2>
          <dl class="facts">
            <dt>Read as</dt>
            <dd>
              {result.source ?? '—'}
              {result.attachment ? ` (${result.attachment})` : ''}
            </dd>
            <dt>From</dt>
            <dd>{result.invoice.from?.name ?? '—'}</dd>
            <dt>To</dt>
            <dd>{result.invoice.to?.name ?? '—'}</dd>
            <dt>Lines</dt>
            <dd>{result.invoice.items?.length ?? 0}</dd>
          </dl>
          <p>{errors.length === 0 ? <strong class="ok-text">No errors: the document meets the rules it declares.</strong> : <strong class="field-error">{errors.length} error{errors.length === 1 ? '' : 's'} found.</strong>}</p>
          {result.findings.length > 0 && (
            <TableWrap label="Findings">
              <table>
                <caption>Findings</caption>
                <thead>
                  <tr>
                    <th scope="col">Rule</th>
                    <th scope="col">Severity</th>
                    <th scope="col">Message</th>
                    <th scope="col">Stated / computed</th>
                  </tr>
                </thead>
                <tbody>
                  {result.findings.map((x, i) => (
                    <tr key={i}>
                      <th scope="row">
                        {x.rule}
                        {x.bt ? ` (${x.bt})` : ''}
                      </th>
                      <td>{x.severity}</td>
                      <td>{x.message}</td>
                      <td>{x.stated !== undefined ? `${x.stated} / ${x.computed ?? '—'}` : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
          )}
          <div class="buttons">
            <button
              type="button"
              class="primary"
              onClick={() => {
                draft.value = fromRequest(result.invoice)
                navigate('/')
              }}
            >
              Load into the editor
            </button>
            <button type="button" disabled={busy || !file} onClick={() => file && read(file, 'pdf')}>
              Show the readable PDF
            </button>
            {pdf && (
              <button type="button" onClick={() => saveBlob(pdf.blob, pdf.name)}>
                Save the readable PDF
              </button>
            )}
          </div>
          {pdf && <iframe class="preview-frame" title={`Readable PDF of ${file?.name ?? 'the received invoice'}`} src={`${pdf.url}#navpanes=0&view=FitH`} />}
        </section>
      )}
    </Page>
  )
}
