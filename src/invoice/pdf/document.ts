// The invoice as a pdfmake document definition: a pure function of the request (and the fetched
// logo). Layout: header (logo or sender, INVOICE or CREDIT NOTE, number, dates, references),
// sender and recipient blocks, an items table that breaks across pages with a repeated header
// row (each line's allowances and charges under it), totals with the document's allowances and
// charges and the VAT breakdown by rate, the legal notes, notes, payment information and details
// (with a payment QR code and late-payment mentions), and a footer with the seller's register
// entry and "Page X of Y". Labels follow `locale` (labels.ts); a
// request using none of the e-invoice fields prints exactly what it always did.
import type { Content, TDocumentDefinitions } from 'pdfmake/interfaces.js'
import { fontRuns, isWinAnsi, type FontName } from './fonts.ts'
import { labelsFor } from './labels.ts'
import { formatterFor } from './locale-format.ts'
import { paymentQr } from '../model/payment-qr.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'
import { computeVat, type TaxCategory } from '../model/vat.ts'
import { reasonText } from '../model/allowance-codes.ts'
import { exemptionNote, latePaymentMentions, registerNote } from '../model/legal-wording.ts'

const INK = '#1f2933'
const MUTED = '#6b7280'
const ACCENT = '#1d4ed8'
const RULE = '#d1d5db'
const ZEBRA = '#f3f4f6'

/** Control characters other than line breaks would print as boxes: drop them. */
function clean(s: string): string {
  return s.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '')
}

function allText(req: InvoiceRequest, extra: string[]): string[] {
  const out: string[] = [...extra]
  const push = (v: unknown) => {
    if (typeof v === 'string') out.push(v)
  }
  for (const i of req.items) push(i.description)
  // Allowance and charge reasons, and the code names printed for those sent without one.
  const reasons = (kind: 'allowance' | 'charge', list?: { reason?: string; reason_code?: string }[]) => list?.forEach((a) => push(reasonText(kind, a, req.locale)))
  for (const i of [...req.items, req]) {
    reasons('allowance', i.allowances)
    reasons('charge', i.charges)
  }
  for (const p of [req.from, req.to, req.payment]) if (p) Object.values(p).forEach(push)
  if (req.from?.register) Object.values(req.from.register).forEach(push)
  ;[req.invoice_number, req.date, req.due_date, req.currency_symbol, req.notes, req.footer, req.payment_info].forEach(push)
  ;[req.buyer_reference, req.order_reference, req.preceding_invoice_number, req.tax_exemption_reason].forEach(push)
  return out
}

/** IBANs print in groups of four. */
const groupIban = (iban: string) => iban.replace(/(.{4})(?=.)/g, '$1 ')

export interface BuildOptions {
  /** data: URL of a fetched PNG/JPEG logo. */
  logoDataUrl?: string
  /** Default invoice date (UTC today, YYYY-MM-DD). */
  today: string
  /** Embed every font (PDF/A): Noto Sans instead of the standard Helvetica. */
  embedFonts?: boolean
}

export function buildInvoiceDocument(req: InvoiceRequest, opts: BuildOptions): { doc: TDocumentDefinitions; base: FontName } {
  const L = labelsFor(req.locale)
  const sym = clean(req.currency_symbol ?? '$')
  const f = formatterFor(req, sym)
  const money = (c: bigint) => f.money(c)
  const totals = computeVat(req, f.exp)
  const exemptions = [...new Set(totals.groups.filter((g) => g.category !== 'S' && g.category !== 'Z').map((g) => g.category))]
  // Lines show their VAT when rates differ by line or categories are used; else the single
  // "Tax (x%)" row stays as it always was.
  // Document-level allowances and charges have their own VAT, so they show it too.
  const documentLevel = (req.allowances?.length ?? 0) + (req.charges?.length ?? 0) > 0
  const breakdown = req.items.some((i) => i.tax_rate !== undefined || i.tax_category !== undefined) || req.tax_category !== undefined || totals.groups.length > 1 || documentLevel
  const vatLabel = (g: { category: TaxCategory; rate: number }) => `${f.rate(g.rate)}%${g.category === 'S' ? '' : ` (${g.category})`}`
  const printed = [...Object.values(L), money(totals.total), money(-totals.discount), ...req.items.map((i) => f.unitPrice(i.unit_price))]
  const base: FontName = !opts.embedFonts && allText(req, printed).every(isWinAnsi) ? 'Helvetica' : 'NotoSans'
  const qr = paymentQr(req, totals.total, f.exp, base === 'Helvetica' ? 'Helvetica' : 'NotoSansSvg')
  const t = (s: string, extra: Record<string, unknown> = {}): Content => {
    const runs = fontRuns(clean(s), base)
    if (runs.length === 1 && runs[0]!.font === base) return { text: runs[0]!.text, ...extra } as Content
    return { text: runs.map((r) => (r.font === base ? r.text : { text: r.text, font: r.font })), ...extra } as Content
  }
  type Party = NonNullable<InvoiceRequest['from']>
  const partyBlock = (title: string, p?: Party): Content[] => {
    if (!p || !Object.values(p).some((v) => typeof v === 'string' && v.trim())) return []
    const lines: Content[] = [t(title.toUpperCase(), { style: 'label' })]
    if (p.name) lines.push(t(p.name, { bold: true, margin: [0, 2, 0, 1] }))
    if (p.address) lines.push(t(p.address))
    if (p.street) lines.push(t(p.street))
    if (p.additional_street) lines.push(t(p.additional_street))
    const place = [p.postal_code, p.city].filter(Boolean).join(' ')
    if (place) lines.push(t(place))
    if (p.country) lines.push(t(f.country(p.country)))
    if (p.email) lines.push(t(p.email, { color: MUTED }))
    if (p.phone) lines.push(t(p.phone, { color: MUTED }))
    if (p.vat_id) lines.push(t(`${L.vatId}: ${p.vat_id}`, { color: MUTED }))
    if (p.tax_number) lines.push(t(`${L.taxNumber}: ${p.tax_number}`, { color: MUTED }))
    // French company ids, printed as they are usually written (groups of three, the SIRET's NIC apart).
    if (p.siren) lines.push(t(`SIREN: ${p.siren.replace(/(\d{3})(\d{3})(\d{3})/, '$1 $2 $3')}`, { color: MUTED }))
    if (p.siret) lines.push(t(`SIRET: ${p.siret.replace(/(\d{3})(\d{3})(\d{3})(\d{5})/, '$1 $2 $3 $4')}`, { color: MUTED }))
    return lines
  }

  const metaRow = (label: string, value: string): Content => ({ columns: [t(label, { color: MUTED, alignment: 'right' }), t(value, { alignment: 'right', width: 'auto' })], columnGap: 8 })
  const creditNote = req.document_type === 'credit_note'
  const title = creditNote ? L.creditNote : L.invoice
  const meta: Content[] = [
    // Long titles ("RECHNUNGSKORREKTUR") shrink to stay on one line of the 220 pt column.
    t(title.toLocaleUpperCase(req.locale ?? 'en'), { style: 'title', alignment: 'right', fontSize: Math.min(24, Math.floor(210 / (title.length * 0.75))) }),
    t(req.invoice_number ?? 'INV-001', { alignment: 'right', bold: true, margin: [0, 2, 0, 6] }),
    metaRow(L.date, f.date(req.date ?? opts.today)),
  ]
  // A credit note is paid by the seller: no due date for the recipient.
  if (req.due_date && !creditNote) meta.push(metaRow(L.dueDate, f.date(req.due_date)))
  if (req.delivery_date) meta.push(metaRow(L.deliveryDate, f.date(req.delivery_date)))
  if (req.buyer_reference) meta.push(metaRow(L.buyerReference, req.buyer_reference))
  if (req.order_reference) meta.push(metaRow(L.orderReference, req.order_reference))
  if (req.preceding_invoice_number) meta.push(metaRow(L.precedingInvoice, req.preceding_invoice_number))

  const brand: Content = opts.logoDataUrl
    ? { image: opts.logoDataUrl, fit: [170, 70] }
    : req.from?.name
      ? t(req.from.name, { fontSize: 16, bold: true, color: ACCENT })
      : { text: '' }

  const header: Content = { columns: [{ width: '*', stack: [brand] }, { width: 220, stack: meta }], margin: [0, 0, 0, 24] }

  const from = partyBlock(L.from, req.from)
  const to = partyBlock(creditNote ? L.creditTo : L.billTo, req.to)
  const parties: Content | null =
    from.length || to.length ? { columns: [{ width: '*', stack: from }, { width: '*', stack: to }], columnGap: 24, margin: [0, 0, 0, 20] } : null

  const headRow = [
    t(L.description, { style: 'th' }),
    t(L.qty, { style: 'th', alignment: 'right' }),
    t(L.unitPrice, { style: 'th', alignment: 'right' }),
    ...(breakdown ? [t(L.vat, { style: 'th', alignment: 'right' })] : []),
    t(L.amount, { style: 'th', alignment: 'right' }),
  ]
  // A line's allowances and charges print under its description; its amount is the net (BT-131).
  const lineAdjustments = (item: InvoiceRequest['items'][number], i: number): string[] => [
    ...(item.allowances ?? []).map((a, j) => `${reasonText('allowance', a, req.locale)}: ${money(-totals.lineAllowances[i]![j]!)}`),
    ...(item.charges ?? []).map((c, j) => `${reasonText('charge', c, req.locale)}: +${money(totals.lineCharges[i]![j]!)}`),
  ]
  const rows = req.items.map((item, i) => [
    lineAdjustments(item, i).length
      ? { stack: [t(item.description), ...lineAdjustments(item, i).map((s) => t(s, { fontSize: 8, color: MUTED }))] }
      : t(item.description),
    t(f.quantity(item.quantity), { alignment: 'right' }),
    t(f.unitPrice(item.unit_price), { alignment: 'right' }),
    ...(breakdown ? [t(vatLabel(totals.lineTax[i]!), { alignment: 'right' })] : []),
    t(money(totals.lines[i]!), { alignment: 'right' }),
  ])
  const itemsTable: Content = {
    table: { headerRows: 1, dontBreakRows: true, widths: breakdown ? ['*', 'auto', 'auto', 'auto', 'auto'] : ['*', 'auto', 'auto', 'auto'], body: [headRow, ...rows] },
    layout: {
      hLineWidth: (i: number, node: any) => (i === 0 || i === node.table.body.length ? 0 : i === 1 ? 1 : 0.5),
      vLineWidth: () => 0,
      hLineColor: (i: number) => (i === 1 ? INK : RULE),
      fillColor: (row: number) => (row === 0 ? null : row % 2 === 0 ? ZEBRA : null),
      paddingLeft: () => 6,
      paddingRight: () => 6,
      paddingTop: () => 5,
      paddingBottom: () => 5,
    },
  }

  const totalRows: Content[][] = [[t(L.subtotal, { color: MUTED }), t(money(totals.subtotal), { alignment: 'right' })]]
  if (req.discount !== undefined && totals.discount > 0n) {
    totalRows.push([t(L.discount, { color: MUTED }), t(money(-totals.discount), { alignment: 'right' })])
  }
  // Document-level allowances and charges, each with the VAT rate it is taxed at.
  const vatOf = (a: { category: TaxCategory; rate: number }) => ` (${L.vat} ${vatLabel(a)})`
  req.allowances?.forEach((a, i) => totalRows.push([t(reasonText('allowance', a, req.locale) + vatOf(totals.allowances[i]!), { color: MUTED }), t(money(-totals.allowances[i]!.amount), { alignment: 'right' })]))
  req.charges?.forEach((c, i) => totalRows.push([t(reasonText('charge', c, req.locale) + vatOf(totals.charges[i]!), { color: MUTED }), t(money(totals.charges[i]!.amount), { alignment: 'right' })]))
  if (breakdown) {
    // The VAT breakdown (EN 16931 BG-23): one row per category and rate, on its taxable amount.
    for (const g of totals.groups) {
      const label = L.vatOn.replace('{rate}', f.rate(g.rate)).replace('{base}', money(g.taxable)) + (g.category === 'S' ? '' : ` (${g.category})`)
      totalRows.push([t(label, { color: MUTED }), t(money(g.tax), { alignment: 'right' })])
    }
  } else if (req.tax_rate !== undefined) {
    totalRows.push([t(`${L.tax} (${f.rate(req.tax_rate)}%)`, { color: MUTED }), t(money(totals.tax), { alignment: 'right' })])
  }
  totalRows.push([t(L.total, { bold: true, fontSize: 12 }), t(money(totals.total), { bold: true, fontSize: 12, alignment: 'right' })])
  const totalsBlock: Content = {
    columns: [
      { width: '*', text: '' },
      {
        width: breakdown ? 300 : 240,
        table: { widths: ['*', 'auto'], body: totalRows },
        layout: {
          hLineWidth: (i: number, node: any) => (i === node.table.body.length - 1 ? 1 : 0),
          vLineWidth: () => 0,
          hLineColor: () => INK,
          paddingTop: () => 4,
          paddingBottom: () => 4,
        },
      },
    ],
    margin: [0, 12, 0, 0],
    unbreakable: true,
  }

  const section = (title: string, body?: string): Content[] =>
    body && body.trim() ? [{ stack: [t(title.toUpperCase(), { style: 'label' }), t(body, { margin: [0, 3, 0, 0] })], margin: [0, 18, 0, 0], unbreakable: body.length < 1500 }] : []

  const exemptionText = exemptions.length
    ? exemptions.map((c) => (c === 'E' || req.tax_exemption_reason ? req.tax_exemption_reason ?? '' : exemptionNote(c, req.locale)!)).filter((x, i, a) => x && a.indexOf(x) === i).join('\n')
    : undefined

  const p = req.payment
  const paymentLines = p
    ? [
        p.account_name && `${L.accountHolder}: ${p.account_name}`,
        p.iban && `IBAN: ${groupIban(p.iban)}`,
        p.bic && `BIC: ${p.bic}`,
        p.reference && `${L.reference}: ${p.reference}`,
        p.terms && `${L.terms}: ${p.terms}`,
        ...latePaymentMentions(req, money),
      ].filter(Boolean).join('\n')
    : ''
  const inlineQr = qr && !qr.page ? qr : null
  const paymentDetails: Content[] = paymentLines || inlineQr
    ? [{
        columns: [
          { width: '*', stack: paymentLines ? [t(L.payment.toUpperCase(), { style: 'label' }), t(paymentLines, { margin: [0, 3, 0, 0] })] : [] },
          ...(inlineQr ? [{ width: 'auto', stack: [inlineQr.content, t(L.scanToPay, { fontSize: 8, color: MUTED, alignment: 'center', margin: [0, 4, 0, 0] })] }] : []),
        ],
        columnGap: 16,
        margin: [0, 18, 0, 0],
        unbreakable: true,
      } as Content]
    : []

  // The register entry German company law asks for on business documents, under the sender's own footer.
  const footerText = [req.footer ? clean(req.footer) : '', registerNote(req.from?.register, req.locale) ?? ''].filter(Boolean).join('\n')
  const doc: TDocumentDefinitions = {
    pageSize: 'A4',
    pageMargins: [48, 48, 48, 64],
    info: { title: `${req.locale ? title : 'Invoice'} ${clean(req.invoice_number ?? 'INV-001')}`, creator: 'queueworks invoice service', producer: 'pdfmake' },
    defaultStyle: { font: base, fontSize: 10, color: INK, lineHeight: 1.2 },
    styles: {
      title: { fontSize: 24, bold: true, color: ACCENT, characterSpacing: 1 },
      label: { fontSize: 8, bold: true, color: MUTED, characterSpacing: 0.5 },
      th: { bold: true, fontSize: 9 },
    },
    content: [
      header,
      ...(parties ? [parties] : []),
      itemsTable,
      totalsBlock,
      ...section(L.exemption, exemptionText),
      ...section(L.notes, req.notes),
      ...section(L.paymentInfo, req.payment_info),
      ...paymentDetails,
      ...(qr?.page ?? []),
    ],
    // The Swiss QR-bill page carries nothing but the payment part: the footer would print into it.
    footer: (current: number, count: number): Content => qr?.page && current === count ? { text: '' } : ({
      margin: [48, 16, 48, 0],
      columns: [
        footerText ? t(footerText, { fontSize: 8, color: MUTED }) : { text: '' },
        t(L.page.replace('{x}', String(current)).replace('{y}', String(count)), { fontSize: 8, color: MUTED, alignment: 'right', width: req.locale ? 110 : 80 }),
      ],
    }),
  }
  return { doc, base }
}
