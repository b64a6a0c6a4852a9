// The readable PDF of a received e-invoice (POST /einvoice/read?output=pdf; docs/einvoice.md,
// "Receiving e-invoices"): what the sender stated, printed as stated — line net amounts, allowances
// and charges, BT-106…BT-115 and the VAT breakdown exactly as the document carries them, never
// this service's recomputation — with the findings listed on the page when there are errors or
// warnings. Built from the read result, so every document that reads renders; runs in the read
// thread, never on the API's event loop.
import pdfmake from 'pdfmake'
import type { Content, TDocumentDefinitions } from 'pdfmake/interfaces.js'
import { embeddedFontFiles, fontRuns, isWinAnsi, pdfmakeFonts, READABLE_FONT_FILES, type FontName } from '../pdf/fonts.ts'
import { labelsFor } from '../pdf/labels.ts'
import type { InvoiceLocale } from '../model/einvoice-schema.ts'
import type { ReadResult, StatedAdjustment } from './read-result.ts'

const INK = '#1f2933'
const MUTED = '#6b7280'
const ACCENT = '#1d4ed8'
const RULE = '#d1d5db'
const ERROR = '#b91c1c'

pdfmake.setUrlAccessPolicy(() => false)
pdfmake.setLocalAccessPolicy((path: string) => READABLE_FONT_FILES.includes(path))
const vfs = (pdfmake as unknown as { virtualfs: { writeFileSync(name: string, data: Buffer): void } }).virtualfs
let vfsLoaded = false

/** Control characters other than line breaks would print as boxes: dropped. */
const clean = (s: string) => s.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '')

export async function renderReceivedPdf(read: ReadResult, locale: InvoiceLocale | undefined): Promise<Buffer> {
  const { doc, base } = receivedDocument(read, locale)
  if (base !== 'Helvetica' && !vfsLoaded) {
    for (const [name, buf] of Object.entries(embeddedFontFiles())) vfs.writeFileSync(name, buf)
    vfsLoaded = true
  }
  pdfmake.setFonts(pdfmakeFonts(base))
  return (await pdfmake.createPdf(doc).getBuffer()) as Buffer
}

export function receivedDocument(read: ReadResult, locale: InvoiceLocale | undefined): { doc: TDocumentDefinitions; base: FontName } {
  const loc = locale ?? read.invoice.locale ?? 'en'
  const L = labelsFor(loc)
  const s = read.stated
  const inv = read.invoice
  const currency = s.currency
  /** A stated amount in the locale's notation, its digits exactly as stated (Intl takes the decimal string). */
  const money = (v: string | undefined): string => {
    if (v === undefined) return ''
    if (!/^\s*[+-]?\d*(\.\d*)?\s*$/.test(v)) return v
    const digits = Math.max(2, /\.(\d*)/.exec(v)?.[1]?.length ?? 0)
    try {
      return new Intl.NumberFormat(loc, { style: 'currency', currency: currency ?? 'XXX', minimumFractionDigits: digits, maximumFractionDigits: digits }).format(v.trim() as unknown as number)
    } catch {
      // Not an ISO currency (BR-CL-04 says so among the findings): the number and the code as written.
      return `${new Intl.NumberFormat(loc, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(v.trim() as unknown as number)} ${currency ?? ''}`.trim()
    }
  }
  const plain = (v: string | undefined) => (v === undefined ? '' : /^\s*[+-]?\d*(\.\d*)?\s*$/.test(v) ? new Intl.NumberFormat(loc, { maximumFractionDigits: 20 }).format(v.trim() as unknown as number) : v)
  const problems = read.findings.filter((f) => f.severity !== 'info')
  const errors = problems.filter((f) => f.severity === 'error').length

  const allText: string[] = [...Object.values(L)]
  const collect = (v: unknown): void => {
    if (typeof v === 'string') allText.push(v)
    else if (Array.isArray(v)) v.forEach(collect)
    else if (v && typeof v === 'object') Object.values(v).forEach(collect)
  }
  collect(read.invoice)
  collect(read.stated)
  collect(problems)
  collect(read.profile)
  allText.push(money('0'))
  const base: FontName = allText.every((x) => isWinAnsi(clean(x))) ? 'Helvetica' : 'NotoSans'
  const t = (x: string, extra: Record<string, unknown> = {}): Content => {
    const runs = fontRuns(clean(x), base)
    if (runs.length === 1 && runs[0]!.font === base) return { text: runs[0]!.text, ...extra } as Content
    return { text: runs.map((r) => (r.font === base ? r.text : { text: r.text, font: r.font })), ...extra } as Content
  }

  const credit = inv.document_type === 'credit_note'
  const header: Content = {
    columns: [
      [t(credit ? L.creditNote.toUpperCase() : L.invoice.toUpperCase(), { style: 'title' }), t(`${inv.invoice_number ?? ''}`, { bold: true })],
      [
        ...(inv.date ? [t(`${L.date}: ${inv.date}`, { alignment: 'right' })] : []),
        ...(inv.due_date ? [t(`${L.dueDate}: ${inv.due_date}`, { alignment: 'right' })] : []),
        ...(inv.buyer_reference ? [t(`${L.buyerReference}: ${inv.buyer_reference}`, { alignment: 'right', color: MUTED })] : []),
        ...(inv.order_reference ? [t(`${L.orderReference}: ${inv.order_reference}`, { alignment: 'right', color: MUTED })] : []),
      ],
    ],
  }
  const origin = t(`Received e-invoice (${read.source}${read.attachment ? `, ${read.attachment}` : ''}); amounts as stated by the sender. Specification (BT-24): ${read.profile.id ?? '—'}`, { fontSize: 8, color: MUTED, margin: [0, 6, 0, 10] })

  const party = (title: string, p: Record<string, any> | undefined): Content[] => {
    if (!p) return []
    const out: Content[] = [t(title.toUpperCase(), { style: 'label' })]
    if (p.name) out.push(t(p.name, { bold: true }))
    for (const k of ['street', 'additional_street']) if (p[k]) out.push(t(p[k]))
    const place = [p.postal_code, p.city].filter(Boolean).join(' ')
    if (place) out.push(t(place))
    if (p.country) out.push(t(p.country))
    if (p.vat_id) out.push(t(`${L.vatId}: ${p.vat_id}`, { color: MUTED }))
    if (p.tax_number) out.push(t(`${L.taxNumber}: ${p.tax_number}`, { color: MUTED }))
    if (p.email) out.push(t(p.email, { color: MUTED }))
    return out
  }
  const parties: Content = { columns: [party(L.from, inv.from), party(L.billTo, inv.to)], columnGap: 24, margin: [0, 0, 0, 14] }

  const adjRow = (a: StatedAdjustment, charge: boolean): Content[] => [
    t(''),
    t(`${charge ? '+ ' : '− '}${[a.reason, a.reason_code && `(${a.reason_code})`, a.percentage && `${plain(a.percentage)} %`, a.base_amount && `of ${money(a.base_amount)}`].filter(Boolean).join(' ') || (charge ? 'Charge' : 'Allowance')}`, { color: MUTED, fontSize: 8 }),
    t(''),
    t(''),
    t(`${charge ? '' : '−'}${money(a.amount)}`, { alignment: 'right', color: MUTED, fontSize: 8 }),
  ]
  const body: Content[][] = [[t('#', { style: 'th' }), t(L.description, { style: 'th' }), t(L.qty, { style: 'th', alignment: 'right' }), t(L.unitPrice, { style: 'th', alignment: 'right' }), t(`${L.amount} (BT-131)`, { style: 'th', alignment: 'right' })]]
  s.lines.forEach((l, i) => {
    const vat = l.vat_category ? ` · ${L.vat} ${l.vat_category}${l.vat_rate !== undefined ? ` ${plain(l.vat_rate)} %` : ''}` : ''
    body.push([
      t(l.id ?? String(i + 1)),
      { stack: [t(l.name ?? ''), t(vat.slice(3), { fontSize: 7, color: MUTED })] } as Content,
      t(`${plain(l.quantity)} ${l.unit ?? ''}`.trim(), { alignment: 'right' }),
      t(`${money(l.unit_price)}${l.price_base_quantity && Number(l.price_base_quantity) !== 1 ? ` / ${plain(l.price_base_quantity)}` : ''}`, { alignment: 'right' }),
      t(money(l.net_amount), { alignment: 'right' }),
    ])
    for (const a of l.allowances) body.push(adjRow(a, false))
    for (const c of l.charges) body.push(adjRow(c, true))
  })
  const items: Content = { table: { headerRows: 1, widths: [24, '*', 60, 80, 80], body }, layout: { hLineColor: () => RULE, vLineWidth: () => 0, hLineWidth: (i: number) => (i <= 1 ? 1 : 0.5) }, margin: [0, 0, 0, 12] }

  const row = (label: string, v: string | undefined, bold = false): Content[] => [t(label, { bold }), t(money(v), { alignment: 'right', bold })]
  const totals: Content[][] = []
  const tt = s.totals
  if (tt.BT106 !== undefined) totals.push(row(`${L.subtotal} (BT-106)`, tt.BT106))
  s.allowances.forEach((a) => totals.push(row(`− ${a.reason ?? a.reason_code ?? 'Allowance'}${a.vat_category ? ` (${L.vat} ${a.vat_category}${a.vat_rate !== undefined ? ` ${plain(a.vat_rate)} %` : ''})` : ''}`, a.amount)))
  if (tt.BT107 !== undefined) totals.push(row('Allowances (BT-107)', tt.BT107))
  s.charges.forEach((c) => totals.push(row(`+ ${c.reason ?? c.reason_code ?? 'Charge'}${c.vat_category ? ` (${L.vat} ${c.vat_category}${c.vat_rate !== undefined ? ` ${plain(c.vat_rate)} %` : ''})` : ''}`, c.amount)))
  if (tt.BT108 !== undefined) totals.push(row('Charges (BT-108)', tt.BT108))
  if (tt.BT109 !== undefined) totals.push(row('Total without VAT (BT-109)', tt.BT109))
  for (const v of s.vat_breakdown) {
    const why = [v.exemption_code, v.exemption_reason].filter(Boolean).join(': ')
    totals.push([t(`${L.vat} ${v.category ?? ''}${v.rate !== undefined ? ` ${plain(v.rate)} %` : ''} · ${money(v.taxable)} (BT-116)${why ? ` · ${why}` : ''}`, { fontSize: 8 }), t(money(v.tax), { alignment: 'right' })])
  }
  if (tt.BT110 !== undefined) totals.push(row(`${L.vat} (BT-110)`, tt.BT110))
  if (tt.BT111 !== undefined) totals.push([t(`${L.vat} ${s.tax_currency ?? ''} (BT-111)`), t(`${plain(tt.BT111)} ${s.tax_currency ?? ''}`, { alignment: 'right' })])
  if (tt.BT112 !== undefined) totals.push(row(`${L.total} (BT-112)`, tt.BT112, true))
  if (tt.BT113 !== undefined) totals.push(row('Paid (BT-113)', tt.BT113))
  if (tt.BT114 !== undefined) totals.push(row('Rounding (BT-114)', tt.BT114))
  if (tt.BT115 !== undefined) totals.push(row('Amount due (BT-115)', tt.BT115, true))
  const totalsBlock: Content = { columns: [{ width: '*', text: '' }, { width: 300, table: { widths: ['*', 100], body: totals.length ? totals : [[t(''), t('')]] }, layout: 'noBorders' }], margin: [0, 0, 0, 12] }

  const section = (title: string, lines: Content[]): Content[] => (lines.length ? [t(title.toUpperCase(), { style: 'label', margin: [0, 8, 0, 2] }), ...lines] : [])
  const means = s.payment_means.map((m) =>
    t(
      [
        `${m.code ?? ''}${m.text ? ` ${m.text}` : ''}`.trim(),
        m.account && `${m.account_name ? `${m.account_name}: ` : ''}${m.account}`,
        m.bic && `BIC ${m.bic}`,
        m.card && `card ${m.card}${m.card_holder ? ` (${m.card_holder})` : ''}`,
        m.mandate && `mandate ${m.mandate}`,
        m.creditor_id && `creditor ${m.creditor_id}`,
        m.debited_account && `debited ${m.debited_account}`,
        m.reference && `${L.reference}: ${m.reference}`,
      ]
        .filter(Boolean)
        .join(' · '),
    ),
  )
  const findings = problems.map((f) => t(`${f.severity === 'error' ? '✗' : '!'} ${f.rule}: ${f.message}`, { fontSize: 8, color: f.severity === 'error' ? ERROR : MUTED }))
  const doc: TDocumentDefinitions = {
    pageSize: 'A4',
    pageMargins: [40, 40, 40, 50],
    defaultStyle: { font: base, fontSize: 9, color: INK },
    styles: { title: { fontSize: 22, bold: true, color: ACCENT }, label: { fontSize: 8, bold: true, color: MUTED }, th: { bold: true, fontSize: 9 } },
    info: { title: `${credit ? L.creditNote : L.invoice} ${inv.invoice_number ?? ''}`.trim(), producer: 'queueworks' },
    footer: (page: number, pages: number) => t(L.page.replace('{x}', String(page)).replace('{y}', String(pages)), { alignment: 'center', fontSize: 8, color: MUTED }),
    content: [
      header,
      origin,
      ...(errors ? [t(`This document has ${errors} error finding${errors === 1 ? '' : 's'}: see "Findings" below.`, { color: ERROR, bold: true, margin: [0, 0, 0, 8] })] : []),
      parties,
      items,
      totalsBlock,
      ...section(L.notes, inv.notes ? [t(inv.notes)] : []),
      ...section(`${L.payment} (BG-16)`, means),
      ...section(`${L.terms} (BT-20)`, s.payment_terms ? [t(s.payment_terms)] : []),
      ...section(`Findings (${problems.length})`, findings),
    ],
  }
  // The "✗" is outside WinAnsi: with Helvetica the findings use an "x".
  if (base === 'Helvetica') for (const f of findings as { text: unknown }[]) if (typeof f.text === 'string') f.text = f.text.replace(/^✗/, 'x')
  return { doc, base }
}
