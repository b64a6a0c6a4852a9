// The invoice PDF in each locale (pdftotext shows the translated labels and Intl-formatted
// amounts and dates), the VAT breakdown by rate, the EPC and Swiss QR-bill payment QR codes read
// back from the rendered page with zbarimg, and a legacy request that shows none of the new labels.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { account } from './helpers/invoice-batch.ts'
import { fullRequest } from './helpers/einvoice.ts'
import { pdfPages, pdfText, pdfWords, qpdfCheck } from './helpers/pdf.ts'
import { SwissQRBill } from 'swissqrbill/svg'
import type { Data } from 'swissqrbill/types'
import { isIBANValid, isQRIBAN, isQRReferenceValid, isSCORReferenceValid } from 'swissqrbill/utils'

const squash = (s: string) => s.replace(/[ \t\u00a0\u202f]+/g, ' ')

/** Every QR code on a page (default the first, 'last' the last), decoded by zbarimg from a 200 dpi rendering. */
function qrCodes(pdf: Buffer, page: number | 'last' = 1): string {
  const dir = mkdtempSync(join(tmpdir(), 'qw-qr-'))
  writeFileSync(join(dir, 'doc.pdf'), pdf)
  const n = page === 'last' ? Number(/^Pages:\s+(\d+)/m.exec(execFileSync('pdfinfo', [join(dir, 'doc.pdf')], { encoding: 'utf8' }))![1]) : page
  execFileSync('pdftoppm', ['-r', '200', '-png', '-singlefile', '-f', String(n), '-l', String(n), join(dir, 'doc.pdf'), join(dir, 'page')])
  return execFileSync('zbarimg', ['-q', '--raw', join(dir, 'page.png')], { encoding: 'utf8' })
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
    assert.ok(!last.includes('Seite'), 'no page footer printed into the payment part')
    assert.match(pages[0]!, /Seite 1 von 2/)
  })

  it('payment_qr swiss: the payment part has the standard\'s size, 210 × 105 mm at the foot of the A4 page', async () => {
    const { pdf } = await render(swiss())
    const words = pdfWords(pdf, pdfPages(pdf))
    const mm = (pt: number) => (pt * 25.4) / 72
    const top = 297 - 105 // the payment part's top edge on A4, in mm
    const at = (word: string) => words.find((w) => w.word === word) ?? assert.fail(`"${word}" not on the page`)
    // Receipt title at 5 mm, payment part title at 67 mm, its account column at 118 mm from the left.
    assert.ok(Math.abs(mm(at('Empfangsschein').x) - 5) < 0.5, `receipt title at ${mm(at('Empfangsschein').x)} mm`)
    assert.ok(Math.abs(mm(at('Zahlteil').x) - 67) < 0.5, `payment part title at ${mm(at('Zahlteil').x)} mm`)
    assert.ok(words.some((w) => w.word === 'Konto' && Math.abs(mm(w.x) - 118) < 0.5), 'account column at 118 mm')
    assert.ok(mm(at('Zahlteil').y) > top && mm(at('Zahlteil').y) < top + 10)
    // The acceptance point label closes the receipt, inside the page (it was cut off when drawn 4/3 too large).
    assert.ok(mm(at('Annahmestelle').bottom) < 297 && mm(at('Annahmestelle').bottom) > top + 80)
  })

  // The Swiss Payments Code (Swiss Implementation Guidelines QR-bill 2.x, § 4.3): one field per
  // line, LF-separated, in this order; creditor and debtor as structured addresses (S).
  const spc = (f: { iban: string; city?: string; zip?: string; refType: string; reference: string; message: string }) => [
    'SPC', '0200', '1', f.iban,
    'S', 'Muster GmbH', 'Bundesplatz 3', '', f.zip ?? '3000', f.city ?? 'Bern', 'CH',
    '', '', '', '', '', '', '',
    '1826.44', 'CHF',
    'S', 'Client SARL', '3 rue de la Paix', '', '75002', 'Paris', 'FR',
    f.refType, f.reference, f.message, 'EPD',
  ]

  /** The decoded payload as the data swissqrbill takes, so its validator judges what a scanner reads. */
  const swissDataOf = (l: string[]): Data => ({
    currency: l[19] as 'CHF',
    amount: Number(l[18]),
    creditor: { account: l[3]!, name: l[5]!, address: l[6]!, zip: l[8]!, city: l[9]!, country: l[10]! },
    debtor: { name: l[21]!, address: l[22]!, zip: l[24]!, city: l[25]!, country: l[26]! },
    ...(l[28] ? { reference: l[28] } : {}),
    ...(l[29] ? { message: l[29] } : {}),
  })

  for (const c of [
    {
      name: 'QR-IBAN with a QR reference (QRR), UTF-8 city',
      from: { city: 'Zürich', postal_code: '8001' },
      payment: { iban: 'CH44 3199 9123 0008 8901 2', reference: '21 00000 00003 13947 14300 09017' },
      want: { iban: 'CH4431999123000889012', city: 'Zürich', zip: '8001', refType: 'QRR', reference: '210000000003139471430009017', message: '' },
    },
    {
      name: 'IBAN with a creditor reference (SCOR)',
      from: {},
      payment: { iban: 'CH9300762011623852957', reference: 'RF18 5390 0754 7034' },
      want: { iban: 'CH9300762011623852957', refType: 'SCOR', reference: 'RF18539007547034', message: '' },
    },
    {
      name: 'IBAN without a structured reference (NON, the reference as the message)',
      from: {},
      payment: { iban: 'CH9300762011623852957', reference: 'Rechnung RE-2026-0042' },
      want: { iban: 'CH9300762011623852957', refType: 'NON', reference: '', message: 'Rechnung RE-2026-0042' },
    },
  ]) {
    it(`payment_qr swiss, ${c.name}: zbarimg reads the Swiss Payments Code from the payment part`, async () => {
      const { pdf } = await render(swiss({ from: { ...swiss().from, ...c.from }, payment: c.payment }))
      const raw = qrCodes(pdf, 'last')
      assert.ok(!raw.includes('\r'), 'LF separators')
      const lines = raw.replace(/\n$/, '').split('\n')
      const want = spc(c.want)
      assert.equal(lines.length, want.length, raw)
      want.forEach((v, i) => assert.equal(lines[i], v, `field ${i + 1} of the Swiss Payments Code`))
      // What swissqrbill enforces: IBAN checksum and country, QR-IBAN ⇔ QRR, reference check digits, lengths.
      assert.doesNotThrow(() => new SwissQRBill(swissDataOf(lines)))
      assert.equal(isIBANValid(lines[3]!), true)
      assert.equal(isQRIBAN(lines[3]!), c.want.refType === 'QRR')
      if (c.want.refType === 'QRR') assert.equal(isQRReferenceValid(lines[28]!), true)
      if (c.want.refType === 'SCOR') assert.equal(isSCORReferenceValid(lines[28]!), true)
    })
  }

  it('payment_qr swiss: a QR-IBAN without a QR reference is a 400 (swissqrbill\'s rule)', async () => {
    const res = await post(`${base}/invoice`, swiss({ payment: { iban: 'CH4431999123000889012', reference: 'RF18539007547034' } }), { key })
    assert.equal(res.status, 400)
    assert.match(res.json.error, /^payment_qr swiss: /)
  })
})
