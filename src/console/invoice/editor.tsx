// The editor: the invoice's fields on the left (the seed's: parties, number, dates, lines, tax,
// discount, notes, footer, logo, payment; and the e-invoice ones: format, the parties' ids and
// structured addresses, allowances and charges, locale, payment QR), running totals computed as the
// service computes them, downloads, and the live preview on the right. Visitors get the same editor
// on the public demo, with the way to an account of their own.
import { useEffect } from 'preact/hooks'
import { fieldId } from '../ui/fields.tsx'
import { Page } from '../ui/page.tsx'
import { Adjustments } from './adjustments.tsx'
import { Area, CATEGORY_OPTIONS, In, Pick } from './bound.tsx'
import { Downloads } from './downloads.tsx'
import { draft, sampleDraft, toRequest } from './draft.ts'
import { problems, problemUnder } from './errors.ts'
import { Lines } from './lines.tsx'
import { PreviewPane } from './preview-pane.tsx'
import { schedulePreview } from './preview.ts'
import { running, RunningTotals } from './running-totals.tsx'
import { APP } from './account.tsx'

const FORMAT_OPTIONS = [
  { value: 'pdf', label: 'PDF' },
  { value: 'facturx', label: 'Factur-X (PDF with EN 16931 XML)' },
  { value: 'xrechnung', label: 'XRechnung (XML)' },
  { value: 'ubl', label: 'UBL / Peppol (XML)' },
]
const LOCALE_OPTIONS = [
  { value: '', label: 'English (default)' },
  ...['de', 'fr', 'es', 'it', 'nl', 'pt-BR', 'ja', 'zh-CN'].map((l) => ({ value: l, label: l })),
  { value: 'en', label: 'en (with locale formats)' },
]
const QR_OPTIONS = [
  { value: '', label: 'None' },
  { value: 'epc', label: 'EPC (SEPA transfer, EUR)' },
  { value: 'swiss', label: 'Swiss QR-bill (CHF, EUR)' },
]

function Party(props: { who: 'from' | 'to'; title: string }) {
  const w = props.who
  const open = problemUnder(w) && ['street', 'city', 'postal_code', 'country', 'vat_id', 'tax_number', 'legal_id', 'peppol_id'].some((f) => problemUnder(`${w}.${f}`))
  return (
    <fieldset class="party">
      <legend>{props.title}</legend>
      <In path={`${w}.name`} label="Name" autoComplete="off" />
      <Area path={`${w}.address`} label="Address" rows={3} />
      <div class="inline-fields">
        <In path={`${w}.email`} label="E-mail" type="email" class="grow" />
        <In path={`${w}.phone`} label="Phone" class="grow" />
      </div>
      <details class="more" open={open || undefined}>
        <summary>E-invoice address and ids ({props.title.toLowerCase()})</summary>
        <div class="inline-fields">
          <In path={`${w}.street`} label="Street" class="grow" />
          <In path={`${w}.postal_code`} label="Postal code" class="num-field" />
          <In path={`${w}.city`} label="City" class="grow" />
          <In path={`${w}.country`} label="Country" hint="DE, FR …" class="num-field" />
        </div>
        <div class="inline-fields">
          <In path={`${w}.vat_id`} label="VAT id" class="grow" />
          <In path={`${w}.tax_number`} label="Tax number" class="grow" />
          <In path={`${w}.legal_id`} label="Legal id" class="grow" />
          <In path={`${w}.peppol_id`} label="Peppol id" hint="0208:0123456789" class="grow" />
        </div>
      </details>
    </fieldset>
  )
}

/** The input a message's path names, or the first input of the row it names (`allowances[0]`); null when the form has none. */
function targetOf(path: string | null): string | null {
  if (!path) return null
  for (const p of [path, `${path}.amount`, `${path}.description`]) if (document.getElementById(fieldId(p))) return fieldId(p)
  return null
}

function Summary() {
  const list = problems.value
  if (!list.length) return null
  return (
    <div class="notice notice-error" role="alert" aria-labelledby="problems-title">
      <h2 id="problems-title">The service refused this invoice</h2>
      <ul>
        {list.map((p) => (
          <li key={p.message}>{targetOf(p.path) ? <a href={`#${targetOf(p.path)}`}>{p.message}</a> : p.message}</li>
        ))}
      </ul>
    </div>
  )
}

export function Editor(props: { demo: boolean }) {
  const d = draft.value
  const body = toRequest(d)
  const json = JSON.stringify(body)
  const signedIn = !props.demo
  useEffect(() => schedulePreview(JSON.parse(json), signedIn), [json, signedIn])
  const r = running(d)
  const einvoiceOpen = ['buyer_reference', 'order_reference', 'delivery_date', 'document_type', 'tax_exemption_reason', 'currency', 'locale'].some(problemUnder)
  return (
    <Page
      title={props.demo ? 'Invoice demo' : 'New invoice'}
      appName={APP}
      actions={
        <button type="button" onClick={() => (draft.value = sampleDraft())}>
          Start over
        </button>
      }
    >
      {props.demo && (
        <div class="notice demo-note">
          <p>
            <strong>This is the public demo:</strong> 5 previews a minute, up to 20 lines, nothing kept. <a href="/sign-in">Sign up for your own invoices</a> — free for
            5 a month, with history, e-invoices and an API key.
          </p>
        </div>
      )}
      <div class="editor-grid">
        <form class="editor-form" aria-label="Invoice" onSubmit={(e) => e.preventDefault()} noValidate>
          <Summary />
          <fieldset>
            <legend>Invoice</legend>
            <div class="inline-fields">
              <In path="invoice_number" label="Number" class="grow" />
              <In path="date" label="Date" hint="YYYY-MM-DD for e-invoices" class="grow" />
              <In path="due_date" label="Due date" class="grow" />
            </div>
            <div class="inline-fields">
              <Pick path="format" label="Format" options={FORMAT_OPTIONS} class="grow" />
              <Pick path="locale" label="Language" options={LOCALE_OPTIONS} />
              <In path="currency" label="Currency" hint="ISO code: EUR" class="num-field" />
              <In path="currency_symbol" label="Symbol" class="num-field" />
            </div>
          </fieldset>
          <div class="parties">
            <Party who="from" title="From" />
            <Party who="to" title="Bill to" />
          </div>
          <Lines amounts={r.amounts} maxLines={props.demo ? 20 : 1000} />
          <fieldset>
            <legend>Tax, discount, allowances and charges</legend>
            <div class="inline-fields">
              <In path="tax_rate" label="VAT %" inputMode="decimal" class="num-field" />
              <Pick path="tax_category" label="VAT category" options={CATEGORY_OPTIONS} />
              <In path="discount" label="Discount" hint="A flat amount off the subtotal" inputMode="decimal" class="num-field" />
            </div>
            <In path="tax_exemption_reason" label="VAT exemption reason" hint="For category E (BT-120)" />
            <Adjustments path="allowances" title="Allowances (BG-20)" />
            <Adjustments path="charges" title="Charges (BG-21)" />
          </fieldset>
          <RunningTotals r={r} />
          <fieldset>
            <legend>Payment</legend>
            <Area path="payment_info" label="Payment details (printed as written)" rows={2} />
            <div class="inline-fields">
              <In path="payment.iban" label="IBAN" class="grow" />
              <In path="payment.bic" label="BIC" class="num-field" />
              <In path="payment.account_name" label="Account holder" class="grow" />
            </div>
            <div class="inline-fields">
              <In path="payment.reference" label="Payment reference" class="grow" />
              <In path="payment.terms" label="Payment terms" class="grow" />
              <Pick path="payment_qr" label="Payment QR code" options={QR_OPTIONS} />
            </div>
          </fieldset>
          <fieldset>
            <legend>Notes and layout</legend>
            <Area path="notes" label="Notes" rows={2} />
            <In path="footer" label="Footer" />
            <In path="logo_url" label="Logo URL" type="url" hint="A PNG or JPEG reachable by the service" />
          </fieldset>
          <details class="more" open={einvoiceOpen || undefined}>
            <summary>More e-invoice fields</summary>
            <div class="inline-fields">
              <Pick path="document_type" label="Document" options={[{ value: '', label: 'Invoice' }, { value: 'credit_note', label: 'Credit note' }]} />
              <In path="buyer_reference" label="Buyer reference" hint="Leitweg-ID for XRechnung (BT-10)" class="grow" />
              <In path="order_reference" label="Order reference" class="grow" />
              <In path="delivery_date" label="Delivery date" hint="YYYY-MM-DD" class="num-field" />
            </div>
          </details>
          <Downloads signedIn={signedIn} />
        </form>
        <PreviewPane current={json} />
      </div>
    </Page>
  )
}
