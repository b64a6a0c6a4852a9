// Batches (GET /invoices/batch): progress of each, and one batch's rows with their errors and the
// ZIP of its PDFs once finished (GET /invoices/batch/{id}). A batch still processing is asked
// again every two seconds while its page is open.
import { useEffect, useState } from 'preact/hooks'
import { api, reconnects, seg } from '../ui/api.ts'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { TableWrap } from '../ui/table.tsx'
import { APP } from './account.tsx'
import { say } from './say.ts'

interface Counts {
  queued: number
  rendering: number
  done: number
  failed: number
}
interface Batch {
  batch_id: string
  status: 'processing' | 'finished'
  total: number
  counts: Counts
  created_at: string
  finished_at: string | null
  archive_url: string | null
}
interface BatchRows extends Batch {
  rows: Array<{ row: number; invoice_id: string; state: string; error: string | null }>
}

function Progress({ b }: { b: Batch }) {
  const settled = b.counts.done + b.counts.failed
  return (
    <span class="progress">
      <progress max={b.total} value={settled} aria-label={`Batch ${b.batch_id}: ${settled} of ${b.total} rendered or failed`} /> {settled} / {b.total}
      {b.counts.failed > 0 && <span class="field-error"> {b.counts.failed} failed</span>}
    </span>
  )
}

/** Polls `load` every 2 s while `active`. */
function usePoll(load: () => void, active: boolean, deps: unknown[]): void {
  useEffect(load, deps)
  useEffect(() => {
    if (!active) return
    const t = setInterval(load, 2000)
    return () => clearInterval(t)
  }, [active, ...deps])
}

export function Batches() {
  const [batches, setBatches] = useState<Batch[] | null>(null)
  const [error, setError] = useState<string | null>(null)
  const load = () =>
    void api<{ batches: Batch[] }>('GET', '/api/v1/invoices/batch?limit=50')
      .then((r) => {
        setBatches(r.data.batches)
        setError(null)
      })
      .catch((e) => setError(say(e)))
  usePoll(load, !!batches?.some((b) => b.status === 'processing'), [reconnects.value])
  return (
    <Page title="Batches" appName={APP}>
      <p>
        Batches are sent through the API (<code>POST /api/v1/invoices/batch</code>, up to 1,000 invoices); their progress, row errors and ZIP are here.
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {batches === null ? (
        !error && <p>Loading…</p>
      ) : (
        <TableWrap label="Batches">
          <table>
            <caption>{batches.length} most recent batches</caption>
            <thead>
              <tr>
                <th scope="col">Batch</th>
                <th scope="col">Sent</th>
                <th scope="col">Status</th>
                <th scope="col">Progress</th>
                <th scope="col">ZIP</th>
              </tr>
            </thead>
            <tbody>
              {batches.length === 0 && (
                <tr>
                  <td colSpan={5} class="muted">
                    No batches yet.
                  </td>
                </tr>
              )}
              {batches.map((b) => (
                <tr key={b.batch_id}>
                  <th scope="row">
                    <a href={`/batches/${b.batch_id}`}>{b.batch_id}</a>
                  </th>
                  <td>
                    <Time iso={b.created_at} />
                  </td>
                  <td>{b.status}</td>
                  <td>
                    <Progress b={b} />
                  </td>
                  <td>{b.archive_url ? <a href={b.archive_url} download aria-label={`ZIP of batch ${b.batch_id}`}>ZIP</a> : <span class="muted">when finished</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
    </Page>
  )
}

export function BatchPage({ id }: { id: string }) {
  const [batch, setBatch] = useState<BatchRows | null>(null)
  const [error, setError] = useState<string | null>(null)
  const load = () =>
    void api<BatchRows>('GET', `/api/v1/invoices/batch/${seg(id)}`)
      .then((r) => {
        setBatch(r.data)
        setError(null)
      })
      .catch((e) => setError(say(e)))
  usePoll(load, batch?.status === 'processing', [id, reconnects.value])
  const failed = batch?.rows.filter((r) => r.error) ?? []
  return (
    <Page title={`Batch ${id}`} appName={APP}>
      <p class="crumbs">
        <a href="/batches">All batches</a>
      </p>
      {error && <Notice kind="error">{error}</Notice>}
      {batch && (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{batch.status}</dd>
            <dt>Progress</dt>
            <dd>
              <Progress b={batch} />
            </dd>
            <dt>Sent</dt>
            <dd>
              <Time iso={batch.created_at} />
            </dd>
          </dl>
          <p>
            {batch.archive_url ? (
              <a class="button primary" href={`/api/v1/invoices/batch/${seg(id)}/archive`} download>
                Download the ZIP ({batch.counts.done} PDFs)
              </a>
            ) : (
              'The ZIP is ready once every row is rendered or failed.'
            )}
          </p>
          <h2>Rows with errors</h2>
          {failed.length === 0 ? (
            <p class="muted">None.</p>
          ) : (
            <ul class="findings">
              {failed.map((r) => (
                <li key={r.row}>
                  Row {r.row}: {r.error}
                </li>
              ))}
            </ul>
          )}
          <TableWrap label="Rows">
            <table>
              <caption>Rows</caption>
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  <th scope="col">State</th>
                  <th scope="col">File</th>
                </tr>
              </thead>
              <tbody>
                {batch.rows.map((r) => (
                  <tr key={r.row}>
                    <th scope="row">{r.row}</th>
                    <td>{r.state}</td>
                    <td>
                      {r.state === 'done' ? (
                        <a href={`/api/v1/invoices/${seg(r.invoice_id)}`} download aria-label={`Download row ${r.row}`}>
                          Download
                        </a>
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </Page>
  )
}
