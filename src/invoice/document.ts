// The invoice as a pdfmake document definition: a pure function of the request (and the fetched
// logo). Layout: header (logo or sender, INVOICE, number, dates), sender and recipient blocks,
// an items table that breaks across pages with a repeated header row, totals, notes, payment
// information, and a footer with "Page X of Y".
import type { Content, TDocumentDefinitions } from 'pdfmake/interfaces.js'
import { fontRuns, isWinAnsi, type FontName } from './fonts.ts'
import { computeTotals, formatMoney, formatQuantity, formatUnitPrice } from './money.ts'
import type { InvoiceRequest } from './schema.ts'

const INK = '#1f2933'
const MUTED = '#6b7280'
const ACCENT = '#1d4ed8'
const RULE = '#d1d5db'
const ZEBRA = '#f3f4f6'

/** Control characters other than line breaks would print as boxes: drop them. */
function clean(s: string): string {
  return s.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '')
}

function allText(req: InvoiceRequest): string[] {
  const out: string[] = []
  const push = (v: unknown) => {
    if (typeof v === 'string') out.push(v)
  }
  for (const i of req.items) push(i.description)
  for (const p of [req.from, req.to]) if (p) Object.values(p).forEach(push)
  ;[req.invoice_number, req.date, req.due_date, req.currency_symbol, req.notes, req.footer, req.payment_info].forEach(push)
  return out
}

export interface BuildOptions {
  /** data: URL of a fetched PNG/JPEG logo. */
  logoDataUrl?: string
  /** Default invoice date (UTC today, YYYY-MM-DD). */
  today: string
  /** Embed every font (PDF/A): Noto Sans instead of the standard Helvetica. */
  embedFonts?: boolean
}

export function buildInvoiceDocument(req: InvoiceRequest, opts: BuildOptions): { doc: TDocumentDefinitions; base: FontName } {
  const base: FontName = !opts.embedFonts && allText(req).every(isWinAnsi) ? 'Helvetica' : 'NotoSans'
  const t = (s: string, extra: Record<string, unknown> = {}): Content => {
    const runs = fontRuns(clean(s), base)
    if (runs.length === 1 && runs[0]!.font === base) return { text: runs[0]!.text, ...extra } as Content
    return { text: runs.map((r) => (r.font === base ? r.text : { text: r.text, font: r.font })), ...extra } as Content
  }
  const sym = clean(req.currency_symbol ?? '$')
  const money = (c: bigint) => formatMoney(c, sym)
  const totals = computeTotals(req.items, { discount: req.discount, tax_rate: req.tax_rate })

  const partyBlock = (title: string, p?: { name?: string; address?: string; email?: string; phone?: string }): Content[] => {
    if (!p || !Object.values(p).some((v) => v && v.trim())) return []
    const lines: Content[] = [t(title.toUpperCase(), { style: 'label' })]
    if (p.name) lines.push(t(p.name, { bold: true, margin: [0, 2, 0, 1] }))
    if (p.address) lines.push(t(p.address))
    if (p.email) lines.push(t(p.email, { color: MUTED }))
    if (p.phone) lines.push(t(p.phone, { color: MUTED }))
    return lines
  }

  const meta: Content[] = [
    t('INVOICE', { style: 'title', alignment: 'right' }),
    t(req.invoice_number ?? 'INV-001', { alignment: 'right', bold: true, margin: [0, 2, 0, 6] }),
    { columns: [t('Date', { color: MUTED, alignment: 'right' }), t(req.date ?? opts.today, { alignment: 'right', width: 'auto' })], columnGap: 8 },
  ]
  if (req.due_date) {
    meta.push({ columns: [t('Due date', { color: MUTED, alignment: 'right' }), t(req.due_date, { alignment: 'right', width: 'auto' })], columnGap: 8 })
  }

  const brand: Content = opts.logoDataUrl
    ? { image: opts.logoDataUrl, fit: [170, 70] }
    : req.from?.name
      ? t(req.from.name, { fontSize: 16, bold: true, color: ACCENT })
      : { text: '' }

  const header: Content = { columns: [{ width: '*', stack: [brand] }, { width: 220, stack: meta }], margin: [0, 0, 0, 24] }

  const from = partyBlock('From', req.from)
  const to = partyBlock('Bill to', req.to)
  const parties: Content | null =
    from.length || to.length ? { columns: [{ width: '*', stack: from }, { width: '*', stack: to }], columnGap: 24, margin: [0, 0, 0, 20] } : null

  const headRow = [
    t('Description', { style: 'th' }),
    t('Qty', { style: 'th', alignment: 'right' }),
    t('Unit price', { style: 'th', alignment: 'right' }),
    t('Amount', { style: 'th', alignment: 'right' }),
  ]
  const rows = req.items.map((item, i) => [
    t(item.description),
    t(formatQuantity(item.quantity), { alignment: 'right' }),
    t(formatUnitPrice(item.unit_price, sym), { alignment: 'right' }),
    t(money(totals.lines[i]!), { alignment: 'right' }),
  ])
  const itemsTable: Content = {
    table: { headerRows: 1, dontBreakRows: true, widths: ['*', 'auto', 'auto', 'auto'], body: [headRow, ...rows] },
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

  const totalRows: Content[][] = [[t('Subtotal', { color: MUTED }), t(money(totals.subtotal), { alignment: 'right' })]]
  if (req.discount !== undefined && totals.discount > 0n) {
    totalRows.push([t('Discount', { color: MUTED }), t(money(-totals.discount), { alignment: 'right' })])
  }
  if (req.tax_rate !== undefined) {
    totalRows.push([t(`Tax (${formatQuantity(req.tax_rate)}%)`, { color: MUTED }), t(money(totals.tax), { alignment: 'right' })])
  }
  totalRows.push([t('Total', { bold: true, fontSize: 12 }), t(money(totals.total), { bold: true, fontSize: 12, alignment: 'right' })])
  const totalsBlock: Content = {
    columns: [
      { width: '*', text: '' },
      {
        width: 240,
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

  const footerText = req.footer ? clean(req.footer) : ''
  const doc: TDocumentDefinitions = {
    pageSize: 'A4',
    pageMargins: [48, 48, 48, 64],
    info: { title: `Invoice ${clean(req.invoice_number ?? 'INV-001')}`, creator: 'queueworks invoice service', producer: 'pdfmake' },
    defaultStyle: { font: base, fontSize: 10, color: INK, lineHeight: 1.2 },
    styles: {
      title: { fontSize: 24, bold: true, color: ACCENT, characterSpacing: 1 },
      label: { fontSize: 8, bold: true, color: MUTED, characterSpacing: 0.5 },
      th: { bold: true, fontSize: 9 },
    },
    content: [header, ...(parties ? [parties] : []), itemsTable, totalsBlock, ...section('Notes', req.notes), ...section('Payment information', req.payment_info)],
    footer: (current: number, count: number): Content => ({
      margin: [48, 16, 48, 0],
      columns: [
        footerText ? t(footerText, { fontSize: 8, color: MUTED }) : { text: '' },
        { text: `Page ${current} of ${count}`, fontSize: 8, color: MUTED, alignment: 'right', width: 80, font: base },
      ],
    }),
  }
  return { doc, base }
}
