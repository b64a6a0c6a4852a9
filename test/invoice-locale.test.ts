// The invoice PDF in each locale (pdftotext shows the translated labels and Intl-formatted
// amounts and dates), the VAT breakdown by rate, the EPC payment QR code read back from the
// rendered page with zbarimg, and a legacy request that shows none of the new labels.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { account } from './helpers/invoice-batch.ts'
import { fullRequest } from './helpers/einvoice.ts'
import { pdfText, qpdfCheck } from './helpers/pdf.ts'

const squash = (s: string) => s.replace(/[ \t\u00a0\u202f]+/g, ' ')

/** Every QR code on page 1, decoded by zbarimg from a 200 dpi rendering. */
function qrCodes(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'qw-qr-'))
  writeFileSync(join(dir, 'doc.pdf'), pdf)
  execFileSync('pdftoppm', ['-r', '200', '-png', '-f', '1', '-l', '1', join(dir, 'doc.pdf'), join(dir, 'page')])
  return execFileSync('zbarimg', ['-q', '--raw', join(dir, 'page-1.png')], { encoding: 'utf8' })
}

describe('invoice PDF: locales, VAT breakdown, payment QR', () => {
  let sys: TestSystem
  let base: string
  let key: string

  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await account(sys, 'pro')).key
  })
  after(async () => sys?.stop())

  async function render(body: unknown): Promise<{ pdf: Buffer; flat: string }> {
    const res = await post(`${base}/invoice`, body, { key })
    assert.equal(res.status, 200, res.text)
    qpdfCheck(res.body)
    return { pdf: res.body, flat: squash(pdfText(res.body)) }
  }

  const expected: Record<string, string[]> = {
    en: ['INVOICE', 'Due date', 'Unit price', 'Subtotal', 'VAT 19% on €1,651.15', 'Total €2,006.42', 'November 2, 2026', 'Page 1 of 1'],
    de: ['RECHNUNG', 'Fällig am', 'Einzelpreis', 'Zwischensumme', 'USt. 19 % auf 1.651,15 €', 'Gesamtbetrag 2.006,42 €', '2. November 2026', 'Seite 1 von 1'],
    fr: ['FACTURE', 'Échéance', 'Prix unitaire', 'Sous-total', 'TVA 19 % sur 1 651,15 €', 'Total 2 006,42 €', '2 novembre 2026', 'Page 1 sur 1'],
    es: ['FACTURA', 'Vencimiento', 'Precio unitario', 'Subtotal', 'IVA 19 % sobre 1651,15 €', '2006,42 €', '2 de noviembre de 2026', 'Página 1 de 1'],
    it: ['FATTURA', 'Scadenza', 'Prezzo unitario', 'Subtotale', 'IVA 19% su 1651,15 €', 'Totale 2006,42 €', '2 novembre 2026', 'Pagina 1 di 1'],
    nl: ['FACTUUR', 'Vervaldatum', 'Prijs per stuk', 'Subtotaal', 'Btw 19% over € 1.651,15', 'Totaal € 2.006,42', '2 november 2026', 'Pagina 1 van 1'],
    'pt-BR': ['FATURA', 'Vencimento', 'Preço unitário', 'Subtotal', 'IVA 19% sobre € 1.651,15', 'Total € 2.006,42', '2 de novembro de 2026', 'Página 1 de 1'],
    ja: ['請求書', '支払期日', '単価', '小計', '合計 €2,006.42', '2026年11月2日', '1 / 1 ページ'],
    'zh-CN': ['发票', '到期日', '单价', '小计', '总计 €2,006.42', '2026年11月2日', '第 1 页，共 1 页'],
  }
  for (const [locale, strings] of Object.entries(expected)) {
    it(`${locale}: labels translated, numbers, dates and currency by Intl`, async () => {
      const { flat } = await render(fullRequest({ locale }))
      for (const s of strings) assert.ok(flat.includes(squash(s)), `${locale}: missing "${s}"\n${flat}`)
    })
  }

  it('currency minor units: JPY without decimals, BHD with three', async () => {
    const jpy = await render({ currency: 'JPY', items: [{ description: 'Widget', quantity: 3, unit_price: 333.5 }] })
    assert.match(jpy.flat, /Total ¥1,001/) // 1000.5 → 1001 yen
    const bhd = await render({ currency: 'BHD', items: [{ description: 'Widget', quantity: 1, unit_price: 1.2345 }] })
    assert.match(bhd.flat, /Total BHD 1\.235/)
  })

  it('a legacy request prints none of the new labels, and its single tax row as before', async () => {
    const { flat } = await render({ items: [{ description: 'Consulting', quantity: 2, unit_price: 50 }], tax_rate: 19, invoice_number: 'INV-7', date: '2026-11-02' })
    assert.match(flat, /Tax \(19%\) \$19\.00/)
    assert.match(flat, /2026-11-02/, 'dates print as written')
    for (const s of ['VAT', 'IBAN', 'Payment details', 'Scan to pay', 'Buyer reference', 'CREDIT NOTE']) assert.ok(!flat.includes(s), `unexpected "${s}"`)
  })

  it('credit note title and VAT categories with their exemption text', async () => {
    const { flat } = await render(fullRequest({ document_type: 'credit_note', items: [{ description: 'Service', quantity: 1, unit_price: 100, tax_category: 'AE' }], tax_rate: undefined, discount: undefined }))
    assert.match(flat, /CREDIT NOTE/)
    assert.match(flat, /VAT 0% on €100\.00 \(AE\) €0\.00/)
    assert.match(flat, /Reverse charge/)
  })

  it('payment_qr epc: the QR on the page decodes to the EPC069-12 payload', async () => {
    const { pdf, flat } = await render(fullRequest({ payment_qr: 'epc' }))
    assert.match(flat, /IBAN: DE89 3704 0044 0532 0130 00/)
    assert.equal(qrCodes(pdf).trimEnd(), ['BCD', '002', '1', 'SCT', 'COBADEFFXXX', 'Muster GmbH', 'DE89370400440532013000', 'EUR2006.42', '', '', 'RE-2026-0042'].join('\n'))
  })

  it('payment_qr epc needs EUR and an IBAN: 400 naming them', async () => {
    const res = await post(`${base}/invoice`, { items: [{ description: 'x', quantity: 1, unit_price: 1 }], payment_qr: 'epc', currency: 'USD' }, { key })
    assert.equal(res.status, 400)
    assert.match(res.json.error, /payment\.iban \(BT-84\) is required for payment_qr epc/)
    assert.match(res.json.error, /currency \(BT-5\) must be EUR for payment_qr epc/)
  })

  const swiss = (extra: Record<string, unknown> = {}) =>
    fullRequest({
      locale: 'de', currency: 'CHF', tax_rate: 8.1, payment_qr: 'swiss',
      from: { ...fullRequest().from, country: 'CH', city: 'Bern', postal_code: '3000', street: 'Bundesplatz 3' },
      payment: { iban: 'CH9300762011623852957', reference: 'RF18539007547034' },
      ...extra,
    })

  it('payment_qr swiss: the QR-bill payment part is printed on its own last page', async () => {
    const { flat } = await render(swiss())
    const pages = flat.split('\f')
    const last = pages.filter((p) => p.trim()).at(-1)!
    for (const s of ['Empfangsschein', 'Zahlteil', 'CH93 0076 2011 6238 5295 7', 'RF18 5390 0754 7034', 'Bundesplatz 3']) assert.ok(last.includes(s), `missing "${s}" on the last page\n${last}`)
    assert.ok(!pages[0]!.includes('Zahlteil'))
  })

  it('payment_qr swiss: a QR-IBAN without a QR reference is a 400 (swissqrbill\'s rule)', async () => {
    const res = await post(`${base}/invoice`, swiss({ payment: { iban: 'CH4431999123000889012', reference: 'RF18539007547034' } }), { key })
    assert.equal(res.status, 400)
    assert.match(res.json.error, /^payment_qr swiss: /)
  })
})
