// Documents for test/invoice-pdf-fast-paths.test.ts, imported both by the test and by the stock
// pdfmake process it starts (table layouts are functions: they cannot travel as JSON).
import { buildInvoiceDocument } from '../../src/invoice/pdf/document.ts'
import { invoiceBodySchema, type InvoiceRequest } from '../../src/invoice/invoice-schema.ts'

/** The three standard font families, by their PDFKit names. */
export const STANDARD_FONTS = {
  Helvetica: { normal: 'Helvetica', bold: 'Helvetica-Bold', italics: 'Helvetica-Oblique', bolditalics: 'Helvetica-BoldOblique' },
  Times: { normal: 'Times-Roman', bold: 'Times-Bold', italics: 'Times-Italic', bolditalics: 'Times-BoldItalic' },
  Courier: { normal: 'Courier', bold: 'Courier-Bold', italics: 'Courier-Oblique', bolditalics: 'Courier-BoldOblique' },
}
const KERNED = 'AVATAR Wave Toyota Yo, LT, P. F. W. Ty Vo y. "Quoted" 1,234.50 – fi fl ÀÉÎ'

/** A document of every style and colour path, in each standard family. */
export function styledDocument(): object {
  const families = ['Helvetica', 'Times', 'Courier']
  return {
    defaultStyle: { font: 'Helvetica', fontSize: 10, color: '#333' },
    styles: {
      base: { fontSize: 11, color: 'darkblue' },
      child: { extends: 'base', bold: true },
      grandchild: { extends: ['child', 'accent'], italics: true },
      accent: { color: '#C0392B', characterSpacing: 0.5 },
      loopA: { extends: 'loopB' },
      loopB: { extends: 'loopA', fontSize: 9 },
      cmyk: { color: [0, 50, 100, 0] },
    },
    content: [
      ...families.map((font) => ({ text: `${font}: ${KERNED}`, font, margin: [0, 2] })),
      ...families.map((font) => ({ text: `${font} bold: ${KERNED}`, font, bold: true })),
      { text: 'inherits size and colour through a chain', style: 'grandchild' },
      { text: 'a cycle of extends', style: ['loopA'] },
      { text: [{ text: 'nested ', style: 'child' }, { text: 'rgb ', color: [12, 200, 99] }, { text: 'cmyk ', style: 'cmyk' }, { text: 'named ', color: 'seagreen' }, { text: 'short hex', color: '#0af' }] },
      {
        table: { headerRows: 1, widths: ['*', 'auto', 80], body: [['Item', 'Qty', 'Price'], ...Array.from({ length: 70 }, (_, i) => [{ text: `Row ${i} ${KERNED.slice(0, 20)}`, color: i % 2 ? '#777777' : 'black' }, String(i), { text: `${(i * 9.95).toFixed(2)}`, alignment: 'right' }])] },
        layout: { hLineColor: (i: number) => (i % 3 ? '#dddddd' : 'red'), vLineColor: () => '#0a0', fillColor: (i: number) => (i % 2 ? '#f6f6f6' : null) },
      },
      { canvas: [{ type: 'line', x1: 0, y1: 5, x2: 500, y2: 5, lineWidth: 1, lineColor: '#1a73e8' }, { type: 'rect', x: 0, y: 10, w: 50, h: 20, color: 'gold', lineColor: [0, 0, 0] }] },
    ],
  }
}

/** A rich invoice through the service's own builder: German labels, adjustments, several pages. */
export function richInvoice(): object {
  const request = invoiceBodySchema.parse({
    invoice_number: 'R-2026-0042', date: '2026-11-02', due_date: '2026-12-02', locale: 'de', currency: 'EUR',
    from: { name: 'Müller & Söhne GmbH', address: 'Hauptstraße 5\n10115 Berlin', email: 'rechnung@mueller.test', phone: '+49 30 123456', vat_id: 'DE123456789' },
    to: { name: 'Wavetech AVATAR Ltd', address: 'Toyota Way 1\nLondon' },
    items: Array.from({ length: 45 }, (_, i) => ({ description: `Wartung Typ ${String.fromCharCode(65 + (i % 26))}V-${i} „Premium“`, quantity: (i % 3) + 1, unit_price: 19.99 + (i % 7), tax_rate: i % 2 ? 19 : 7 })),
    allowances: [{ amount: 10, reason: 'Treuerabatt', tax_rate: 19 }],
    charges: [{ amount: 4.9, reason: 'Versand', tax_rate: 19 }],
    notes: 'Vielen Dank für Ihren Auftrag. AV To Wa Yo.',
  })
  return buildInvoiceDocument(request, { today: '2026-11-02' }).doc
}


/** A valid EN 16931 Factur-X request: the parties, payment and items every output format accepts. */
function facturx(extra: Record<string, unknown>): InvoiceRequest {
  return invoiceBodySchema.parse({
    format: 'facturx', invoice_number: 'FX-2026-0007', date: '2026-11-02', due_date: '2026-12-02', currency: 'EUR', tax_rate: 19,
    from: { name: 'Muster GmbH', street: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country: 'DE', vat_id: 'DE123456789', email: 'billing@muster.example' },
    to: { name: 'Client SARL', street: '3 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR', vat_id: 'FR12345678901', email: 'ap@client.example' },
    buyer_reference: '04011000-12345-67',
    payment: { iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX', reference: 'FX-2026-0007', terms: 'Net 30 days' },
    ...extra,
  })
}

/**
 * Requests whose PDFs embed every font, as the Factur-X output renders them: Noto Sans with its
 * kerning and ligatures, CJK text in Noto Sans SC, Greek and Cyrillic, bold, an EPC payment QR,
 * several pages; the last repeats the first once every shared table and word layout is warm.
 */
export function embeddedFontRequests(): InvoiceRequest[] {
  const long = facturx({
    locale: 'de', payment_qr: 'epc', discount: 25,
    items: Array.from({ length: 48 }, (_, i) => ({
      description: [`Wartung Typ ${String.fromCharCode(65 + (i % 26))}V-${i} „Premium“ fi fl`, `保守サービス 第${i}号 / 维护服务`, `Łódź Ærøskøbing ŞĞİ ${i}`, `Ελληνικά Кириллица AVATAR ${i}`][i % 4],
      quantity: (i % 3) + 1, unit_price: 19.99 + (i % 7), tax_rate: i % 2 ? 19 : 7,
    })),
    allowances: [{ amount: 10, reason: 'Treuerabatt', tax_rate: 19 }],
    notes: 'Vielen Dank für Ihren Auftrag — 感谢您的订单. Ευχαριστούμε. Спасибо. AV To Wa Yo.',
  })
  const short = facturx({ locale: 'fr', items: [{ description: 'Conseil — Œuvre, façade', quantity: 10, unit_price: 120, unit: 'HUR' }, { description: 'Livre', quantity: 2, unit_price: 19.99, tax_rate: 7 }] })
  return [long, short, long]
}
