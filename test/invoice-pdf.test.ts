// What the rendered invoice says, read back with pdftotext: names, line totals, subtotal,
// discount, tax and total for money edge cases; multi-page tables; line breaks; footer; Unicode.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { post } from './helpers/http.ts'
import { pdfPages, pdfText, qpdfCheck } from './helpers/pdf.ts'

/** Collapse layout spacing so that "Subtotal      $2.02" reads "Subtotal $2.02". */
const squash = (s: string) => s.replace(/[ \t]+/g, ' ')

describe('invoice PDF content', () => {
  let sys: TestSystem
  let base: string
  let key: string

  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    base = sys.url.invoice!
    key = (await post(`${base}/signup`, { email: 'pdf-content@example.com' })).json.api_key
    // Room for every case in this file.
    await sys.platform.db.collection('accounts').updateOne({ email: 'pdf-content@example.com' }, { $set: { plan: 'pro' } })
  })
  after(async () => sys?.stop())

  async function render(body: unknown): Promise<{ pdf: Buffer; text: string; flat: string }> {
    const res = await post(`${base}/invoice`, body, { key })
    assert.equal(res.status, 200, res.text)
    qpdfCheck(res.body)
    const text = pdfText(res.body)
    return { pdf: res.body, text, flat: squash(text) }
  }

  it('prints parties, number, dates, lines and totals (half-up rounding: 1.005 → 1.01)', async () => {
    const { flat } = await render({
      from: { name: 'Acme Tools Ltd', address: '1 Forge Lane', email: 'billing@acme.test', phone: '+44 20 7946 0000' },
      to: { name: 'Globex Corporation', address: '500 Main St', email: 'ap@globex.test' },
      invoice_number: 'INV-2026-042',
      date: '2026-11-21',
      due_date: '21 Dec 2026',
      tax_rate: 12.5,
      items: [
        { description: 'Half-cent part', quantity: 1, unit_price: 1.005 },
        { description: 'Three thirds', quantity: 3, unit_price: 0.335 },
      ],
    })
    for (const s of ['Acme Tools Ltd', '1 Forge Lane', 'billing@acme.test', '+44 20 7946 0000', 'Globex Corporation', '500 Main St', 'ap@globex.test', 'INV-2026-042', '2026-11-21', '21 Dec 2026']) {
      assert.ok(flat.includes(s), `missing ${s}\n${flat}`)
    }
    assert.match(flat, /Half-cent part 1 \$1\.005 \$1\.01/)
    assert.match(flat, /Three thirds 3 \$0\.335 \$1\.01/)
    assert.match(flat, /Subtotal \$2\.02/)
    assert.match(flat, /Tax \(12\.5%\) \$0\.25/) // 0.2525
    assert.match(flat, /Total \$2\.27/)
    assert.doesNotMatch(flat, /Discount/, 'no discount row without a discount')
  })

  it('fractional quantities, a discount, and tax on the discounted subtotal', async () => {
    const { flat } = await render({
      items: [
        { description: 'Design hours', quantity: 1.5, unit_price: 33.33 }, // 49.995 → 50.00
        { description: 'Quarter unit', quantity: 0.25, unit_price: 10 }, // 2.50
      ],
      discount: 2.5,
      tax_rate: 20,
    })
    assert.match(flat, /Design hours 1\.5 \$33\.33 \$50\.00/)
    assert.match(flat, /Quarter unit 0\.25 \$10\.00 \$2\.50/)
    assert.match(flat, /Subtotal \$52\.50/)
    assert.match(flat, /Discount -\$2\.50/)
    assert.match(flat, /Tax \(20%\) \$10\.00/) // 20% of 50.00, not of 52.50
    assert.match(flat, /Total \$60\.00/)
  })

  it('a discount equal to the subtotal: total 0.00 and no tax', async () => {
    const { flat } = await render({ items: [{ description: 'Gift', quantity: 2, unit_price: 50 }], discount: 100, tax_rate: 10 })
    assert.match(flat, /Subtotal \$100\.00/)
    assert.match(flat, /Discount -\$100\.00/)
    assert.match(flat, /Tax \(10%\) \$0\.00/)
    assert.match(flat, /Total \$0\.00/)
  })

  it('large amounts get thousands separators; the default number and today’s date are printed', async () => {
    const { flat } = await render({ items: [{ description: 'Fleet', quantity: 1000, unit_price: 1234.56 }] })
    assert.match(flat, /Fleet 1000 \$1,234\.56 \$1,234,560\.00/)
    assert.match(flat, /Total \$1,234,560\.00/)
    assert.ok(flat.includes('INV-001'))
    assert.ok(flat.includes(new Date().toISOString().slice(0, 10)))
  })

  it('a long items table breaks across pages, repeats its header, and numbers the pages', async () => {
    const items = Array.from({ length: 120 }, (_, i) => ({ description: `Line item number ${i + 1}`, quantity: 1, unit_price: 1 }))
    const { pdf, text } = await render({ items, footer: 'Thank you for your business' })
    const pages = pdfPages(pdf)
    assert.ok(pages >= 3, `expected several pages, got ${pages}`)
    const perPage = text.split('\f').filter((p) => p.trim())
    assert.equal(perPage.length, pages)
    perPage.forEach((p, i) => {
      assert.match(p, /Description\s+Qty\s+Unit price\s+Amount/, `header row on page ${i + 1}`)
      assert.ok(p.includes(`Page ${i + 1} of ${pages}`), `page number on page ${i + 1}`)
      assert.ok(p.includes('Thank you for your business'), `footer on page ${i + 1}`)
    })
    for (let i = 1; i <= 120; i++) assert.match(text, new RegExp(`Line item number ${i}\\s`), `row ${i}`)
    assert.match(squash(text), /Total \$120\.00/)
  })

  it('keeps the line breaks of payment_info and prints notes', async () => {
    const { text } = await render({
      items: [{ description: 'Retainer', quantity: 1, unit_price: 10 }],
      notes: 'Late payments incur 2% monthly interest.',
      payment_info: 'Bank: First Test Bank\nIBAN: DE89 3704 0044 0532 0130 00\r\nBIC: COBADEFFXXX',
    })
    const lines = text.split('\n').map((l) => l.trim())
    const at = (s: string) => lines.findIndex((l) => l.includes(s))
    assert.ok(at('Bank: First Test Bank') >= 0 && at('IBAN: DE89') === at('Bank: First Test Bank') + 1, text)
    assert.equal(at('BIC: COBADEFFXXX'), at('IBAN: DE89') + 1)
    assert.ok(!lines.some((l) => l.includes('Bank') && l.includes('IBAN')), 'not joined on one line')
    assert.ok(text.includes('Late payments incur 2% monthly interest.'))
    assert.ok(text.includes('PAYMENT INFORMATION') && text.includes('NOTES'))
  })

  it('prints €, ₹, zł, ő, Cyrillic and Chinese exactly as sent', async () => {
    const samples = ['Müller & Söhne GmbH', 'Gődöllő Kft.', 'Иван Петров', '北京科技有限公司', 'Łukasz Żółć', 'Ελληνικά']
    for (const [sym, amount] of [['€', '€1,234.50'], ['₹', '₹1,234.50'], ['zł', 'zł1,234.50']] as const) {
      const { flat } = await render({
        currency_symbol: sym,
        from: { name: samples[0], address: samples[1] },
        to: { name: samples[2], address: samples[3] },
        notes: samples[4],
        footer: samples[5],
        items: [{ description: `${samples[3]} consulting – ${samples[2]}`, quantity: 1, unit_price: 1234.5 }],
      })
      for (const s of samples) assert.ok(flat.includes(s), `missing ${s} (${sym})\n${flat}`)
      assert.ok(flat.includes(`${samples[3]} consulting – ${samples[2]}`), flat)
      assert.match(flat, new RegExp(`Total ${amount.replace(/[.$]/g, '\\$&')}`), flat)
    }
  })

  it('Latin-1 text keeps the fast standard font; other scripts embed a Unicode font', async () => {
    const latin = await render({ items: [{ description: 'Café crème – €', quantity: 1, unit_price: 1 }] })
    const cjk = await render({ items: [{ description: '中文', quantity: 1, unit_price: 1 }] })
    assert.ok(latin.flat.includes('Café crème – €'))
    assert.ok(latin.pdf.toString('latin1').includes('/Helvetica'))
    assert.ok(!latin.pdf.toString('latin1').includes('FontFile'), 'no embedded font needed')
    assert.ok(cjk.pdf.toString('latin1').includes('FontFile'), 'a font is embedded')
  })

  it('control characters are dropped rather than printed as boxes', async () => {
    const { flat } = await render({ items: [{ description: 'Bell\u0007 and\u0000 null', quantity: 1, unit_price: 1 }] })
    assert.ok(flat.includes('Bell and null'), flat)
  })
})
