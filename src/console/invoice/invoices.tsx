// The account's invoices (GET /invoices): newest first, filters kept in the address (so a filtered
// list can be bookmarked or shared), more pages by the stable cursor, and the file again while the
// service keeps it (GET /invoices/{id}, with the session cookie: a plain download link).
import { useEffect, useState } from 'preact/hooks'
import { api, reconnects } from '../ui/api.ts'
import { SelectField, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { currentQuery, navigate } from '../ui/router.ts'
import { TableWrap } from '../ui/table.tsx'
import { APP } from './account.tsx'
import { say } from './say.ts'

interface Listed {
  invoice_id: string
  kind: 'single' | 'batch'
  batch_id: string | null
  row: number | null
  status: string
  invoice_number: string | null
  recipient: { name: string | null; email: string | null } | null
  format: string
  size_bytes: number | null
  error: string | null
  created_at: string
  download_url: string | null
}

const FILTERS = ['number', 'recipient', 'created_from', 'created_to', 'format', 'kind', 'status'] as const
type Filters = Record<(typeof FILTERS)[number], string>

function filtersOf(search: string): Filters {
  const q = new URLSearchParams(search)
  return Object.fromEntries(FILTERS.map((f) => [f, q.get(f) ?? ''])) as Filters
}

const any = (label: string, values: string[]) => [{ value: '', label }, ...values.map((v) => ({ value: v, label: v }))]

export function Invoices() {
  const applied = filtersOf(currentQuery.value)
  const [form, setForm] = useState<Filters>(applied)
  const [rows, setRows] = useState<Listed[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const load = async (before: string | null) => {
    const q = new URLSearchParams()
    for (const f of FILTERS) if (applied[f]) q.set(f, applied[f])
    if (before) q.set('before', before)
    q.set('limit', '20')
    setBusy(true)
    try {
      const r = await api<{ invoices: Listed[]; next_before: string | null }>('GET', `/api/v1/invoices?${q}`)
      setRows((old) => (before ? [...(old ?? []), ...r.data.invoices] : r.data.invoices))
      setNext(r.data.next_before)
      setError(null)
    } catch (e) {
      setError(say(e))
    } finally {
      setBusy(false)
    }
  }
  useEffect(() => {
    setForm(applied)
    void load(null)
  }, [currentQuery.value, reconnects.value])

  const set = (f: keyof Filters) => (v: string) => setForm({ ...form, [f]: v })
  return (
    <Page title="Invoices" appName={APP}>
      <form
        class="filters"
        aria-label="Filter invoices"
        onSubmit={(e) => {
          e.preventDefault()
          const q = new URLSearchParams()
          for (const f of FILTERS) if (form[f].trim()) q.set(f, form[f].trim())
          navigate(`/invoices${q.size ? `?${q}` : ''}`)
        }}
      >
        <TextField id="filter-number" label="Number contains" value={form.number} onValue={set('number')} />
        <TextField id="filter-recipient" label="Recipient contains" value={form.recipient} onValue={set('recipient')} />
        <TextField id="filter-from" label="Made from" type="date" value={form.created_from} onValue={set('created_from')} />
        <TextField id="filter-to" label="Made until" type="date" value={form.created_to} onValue={set('created_to')} />
        <SelectField id="filter-format" label="Format" value={form.format} options={any('Any format', ['pdf', 'facturx', 'xrechnung', 'ubl'])} onValue={set('format')} />
        <SelectField id="filter-kind" label="Kind" value={form.kind} options={any('Single and batch', ['single', 'batch'])} onValue={set('kind')} />
        <SelectField id="filter-status" label="Status" value={form.status} options={any('Any status', ['queued', 'rendering', 'done', 'failed'])} onValue={set('status')} />
        <button type="submit" class="primary">
          Filter
        </button>
      </form>
      {error && <Notice kind="error">{error}</Notice>}
      {rows === null ? (
        !error && <p>Loading…</p>
      ) : (
        <TableWrap label="Invoices">
          <table>
            <caption>
              {rows.length} invoice{rows.length === 1 ? '' : 's'}
              {next ? ' shown, more below' : ''}, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Recipient</th>
                <th scope="col">Made</th>
                <th scope="col">Format</th>
                <th scope="col">Status</th>
                <th scope="col">File</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={6} class="muted">
                    No invoices {FILTERS.some((f) => applied[f]) ? 'match these filters' : 'yet: make one in the editor'}.
                  </td>
                </tr>
              )}
              {rows.map((r) => (
                <tr key={r.invoice_id}>
                  <th scope="row">{r.invoice_number ?? 'INV-001'}</th>
                  <td>{r.recipient?.name ?? r.recipient?.email ?? '—'}</td>
                  <td>
                    <Time iso={r.created_at} />
                    {r.kind === 'batch' && r.batch_id && (
                      <>
                        {' '}
                        <a href={`/batches/${r.batch_id}`}>batch row {r.row}</a>
                      </>
                    )}
                  </td>
                  <td>{r.format}</td>
                  <td>
                    {r.status}
                    {r.error && <span class="field-error"> {r.error}</span>}
                  </td>
                  <td>
                    {r.download_url ? (
                      <a href={r.download_url} download aria-label={`Download ${r.invoice_number ?? 'invoice'} (${r.format})`}>
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
      )}
      {next && (
        <button type="button" disabled={busy} onClick={() => load(next)}>
          Show more
        </button>
      )}
      <p class="hint">Files are kept for the retention period of the service; the dates are when the invoice was made.</p>
    </Page>
  )
}
