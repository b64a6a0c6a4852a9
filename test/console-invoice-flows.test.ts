// The invoice console end to end in Chromium against a real invoice service with its workers:
// sign-up and sign-in, the account (usage meter, upgrade through the Stripe simulator's page, key
// rotation), the editor (fields, lines added, moved and removed, running totals, live preview, the
// API's refusals at their fields, downloads that are the API's own bytes), history with filters and
// re-download, batches with row errors and the ZIP, a received e-invoice read and loaded into the
// editor, and the public demo with its rate limit as a readable message.
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import type { Download, Page } from 'playwright-core'
import { cspViolations, shot, visit, type ConsolePage, type ConsoleRig } from './helpers/console.ts'
import { invoiceAccount, openInvoiceConsole, startInvoiceConsole } from './helpers/console-invoice.ts'
import { call, get, post } from './helpers/http.ts'
import { pdfText } from './helpers/pdf.ts'
import { computeVat } from '../src/invoice/model/vat.ts'
import { decimalString } from '../src/invoice/model/money.ts'

/**
 * Two renders of the same request differ only in the time they were made, to the second: PDFKit's
 * CreationDate/ModDate (and the embedded XML's, in Factur-X) and the XMP metadata's dates. Those are
 * blanked; every other byte must be equal.
 */
export function samePdf(a: Buffer, b: Buffer): boolean {
  const norm = (x: Buffer) =>
    x
      .toString('latin1')
      .replace(/\(D:\d{14}Z\)/g, '(D:)')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d/g, 'T')
      // The file id PDFKit derives from that time and the document's info.
      .replace(/\/ID \[<[0-9a-f]{32}> <[0-9a-f]{32}>\]/gi, '/ID')
  return a.length === b.length && norm(a) === norm(b)
}

async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; bytes: Buffer }> {
  const [dl] = (await Promise.all([
    page.waitForEvent('download', { timeout: 20_000 }).catch(async (e) => {
      throw new Error(`${(e as Error).message}; the page says: ${await page.locator('main').textContent()}`)
    }),
    click(),
  ])) as [Download, void]
  return { name: dl.suggestedFilename(), bytes: await readFile((await dl.path())!) }
}

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The render of what is on screen has settled and its frame has loaded (the pane is aria-busy until then). */
async function previewShown(page: Page): Promise<void> {
  try {
    await page.locator('.preview-pane:not([aria-busy])').waitFor({ timeout: 20_000 })
    await page.locator('.preview-status', { hasText: 'Up to date.' }).waitFor({ timeout: 20_000 })
    await page.locator('iframe.preview-frame[data-loaded]').waitFor({ timeout: 20_000 })
  } catch (e) {
    throw new Error(`${(e as Error).message}; the page says: ${await page.locator('main').textContent()}`)
  }
}

describe('invoice console: every flow end to end (Chromium)', function () {
  this.timeout(90_000)
  let rig: ConsoleRig
  let acc: { key: string; email: string }
  let cp: ConsolePage
  const api = (path: string) => `${rig.root}/api/v1${path}`
  before(async () => {
    rig = await startInvoiceConsole()
    acc = await invoiceAccount(rig)
    // Upgraded through the API so the downloads below do not run into the free plan's 5.
    const c = await post(api('/checkout'), { plan: 'pro' }, { key: acc.key })
    assert.equal(c.status, 200, c.text)
    assert.equal((await fetch(c.json.checkout_url, { method: 'POST', redirect: 'manual' })).status, 303)
    await waitFor(async () => (await get(api('/usage'), { key: acc.key })).json.plan === 'pro', 20_000, 'the upgrade')
    cp = await openInvoiceConsole(rig, acc.key)
  })
  after(async () => {
    if (cp) assert.deepEqual(await cspViolations(cp.page), [], 'CSP violations')
    // Refusals the tests ask for (400s at fields) are logged by the browser as failed loads: nothing else may be.
    if (cp) assert.deepEqual(cp.errors.filter((e) => !/Failed to load resource: (the server responded with a status of 400|net::ERR_CONNECTION_REFUSED)/.test(e)), [], 'console errors')
    await rig?.stop()
  })

  it('sign up: the key is shown once with a copy button and opens a session; sign out; a deep link asks to sign in and comes back', async () => {
    const { page, context } = await openInvoiceConsole(rig, null)
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    await page.goto('/sign-in')
    await page.getByLabel('E-mail').fill(`invoice-console-${Date.now()}@example.com`)
    await shot(page, 'invoice-sign-in')
    await page.getByRole('button', { name: 'Sign up' }).click()
    const key = (await page.locator('code.secret').textContent())!
    assert.match(key, /^dm_/)
    await page.getByRole('button', { name: 'Copy API key' }).click()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), key)
    await page.getByRole('button', { name: /I have saved it/ }).click()
    await page.getByRole('heading', { level: 1, name: 'New invoice' }).waitFor()
    assert.equal(await page.evaluate(() => localStorage.length + sessionStorage.length), 0)
    assert.equal(await page.evaluate(() => document.cookie), '', 'the session cookie is HttpOnly')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    await page.goto('/invoices?number=x')
    await page.waitForURL('**/sign-in')
    await page.getByLabel('API key', { exact: true }).fill('dm_not-a-key')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByText('That API key is not valid (or was replaced).').waitFor()
    await page.getByLabel('API key', { exact: true }).fill(key)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Invoices' }).waitFor()
    assert.match(page.url(), /\/invoices\?number=x$/)
    await context.close()
  })

  it('account: plan and usage meter; upgrade through Stripe Checkout (the simulator’s page); the key rotated and shown once, the console carrying on', async () => {
    const fresh = await invoiceAccount(rig)
    assert.equal((await post(api('/invoice'), { items: [{ description: 'x', quantity: 1, unit_price: 1 }] }, { key: fresh.key })).status, 200)
    const { page, context } = await openInvoiceConsole(rig, fresh.key)
    await visit(page, '/account', 'Account')
    await page.getByText('Invoices this month: 1 of 5 (4 left)').waitFor()
    assert.equal(await page.locator('#plan-name').textContent(), 'free')
    assert.equal(await page.locator('meter#usage-meter').getAttribute('value'), '1')
    assert.equal(await page.locator('meter#usage-meter').getAttribute('max'), '5')
    await shot(page, 'invoice-account')
    await page.getByLabel('Plan', { exact: true }).selectOption('starter')
    await page.getByRole('button', { name: 'Upgrade with Stripe Checkout' }).click()
    await page.waitForURL((u) => u.origin !== rig.root)
    assert.match((await page.textContent('body'))!, /starter/i)
    await page.locator('#pay').click()
    await page.waitForURL('**/api/v1/billing/success**')
    await waitFor(async () => (await get(api('/usage'), { key: fresh.key })).json.plan === 'starter', 20_000, 'the plan change')
    // The page Stripe returns to leads back to the account screen.
    await page.getByRole('link', { name: 'Back to your account' }).click()
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor()
    await page.getByText('Invoices this month: 1 of 100 (99 left)').waitFor()
    assert.equal(await page.locator('#plan-name').textContent(), 'starter')

    await page.getByRole('button', { name: 'Rotate API key' }).click()
    const dialog = page.getByRole('dialog')
    assert.match((await dialog.textContent())!, /stops working at once/)
    await dialog.getByRole('button', { name: 'Rotate the key' }).click()
    const newKey = (await page.locator('.keyshow code.secret').textContent())!
    assert.match(newKey, /^dm_/)
    assert.notEqual(newKey, fresh.key)
    assert.equal((await get(api('/usage'), { key: fresh.key })).status, 401, 'the old key is refused')
    assert.equal((await get(api('/usage'), { key: newKey })).status, 200)
    // The console carries on, on a session of the new key.
    await page.getByRole('navigation').getByRole('link', { name: 'Invoices' }).click()
    await page.getByRole('heading', { level: 1, name: 'Invoices' }).waitFor()
    await page.getByRole('rowheader', { name: 'INV-001' }).waitFor()
    await context.close()
  })

  it('a key rotated elsewhere ends the session: the next preview sends the editor to sign-in, saying why', async () => {
    const fresh = await invoiceAccount(rig)
    const { page, context } = await openInvoiceConsole(rig, fresh.key)
    await visit(page, '/', 'New invoice')
    await previewShown(page)
    assert.equal((await post(api('/account/key/rotate'), undefined, { key: fresh.key })).status, 200)
    await page.getByLabel('Number', { exact: true }).fill('AFTER-ROTATION')
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor()
    await page.locator('.notice-warn', { hasText: /replaced|rotated|revoked|no longer/i }).waitFor()
    await context.close()
  })

  it('editor: fields, lines added, moved and removed, running totals as the service computes them, the live preview', async () => {
    const { page } = cp
    await visit(page, '/', 'New invoice')
    await previewShown(page)
    await page.getByLabel('Number', { exact: true }).fill('ED-1')
    await page.locator('#f-to_name').fill('Initech GmbH')
    await page.getByRole('button', { name: 'Add line' }).click()
    await page.locator('#f-items_1__description').fill('Licence')
    await page.locator('#f-items_1__quantity').fill('3')
    await page.locator('#f-items_1__unit_price').fill('19.995')
    await page.getByRole('button', { name: 'Add line' }).click()
    await page.locator('#f-items_2__description').fill('Support')
    await page.locator('#f-items_2__unit_price').fill('0.335')
    await page.locator('#f-items_2__quantity').fill('3')
    await page.getByRole('button', { name: 'Move line 3 up' }).click()
    assert.equal(await page.locator('#f-items_1__description').inputValue(), 'Support')
    await page.getByLabel('Discount', { exact: true }).fill('1.005')
    await page.locator('#f-tax_rate').fill('19')
    // 1.5 × 120 = 180.00; 3 × 0.335 = 1.005 → 1.01; 3 × 19.995 = 59.985 → 59.99; − 1.005 (→ 1.01)
    const lines = [
      { quantity: 1.5, unit_price: 120 },
      { quantity: 3, unit_price: 0.335 },
      { quantity: 3, unit_price: 19.995 },
    ]
    const expected = computeVat({ items: lines, discount: 1.005, tax_rate: 19 })
    await page.locator('#invoice-total', { hasText: `$${decimalString(expected.total, 2)}` }).waitFor()
    assert.equal(await page.getByLabel('Amount of line 2').textContent(), '$1.01')
    const previews: string[] = []
    await page.route('**/api/v1/invoice/preview', (route) => {
      previews.push(route.request().postData()!)
      return route.continue()
    })
    await page.getByRole('button', { name: 'Remove line 3' }).click()
    const two = computeVat({ items: lines.slice(0, 2), discount: 1.005, tax_rate: 19 })
    await page.locator('#invoice-total', { hasText: `$${decimalString(two.total, 2)}` }).waitFor()
    // The preview is the service's render of what is on screen.
    await previewShown(page)
    // The last render the page asked for, asked again of the service.
    await page.unroute('**/api/v1/invoice/preview')
    const last = JSON.parse(previews.at(-1)!)
    assert.deepEqual(last.items.map((i: any) => i.description), ['Consulting', 'Support'])
    const again = await post(api('/invoice/preview'), last, { key: acc.key })
    const text = pdfText(again.body)
    assert.match(text, /ED-1/)
    assert.match(text, /Initech GmbH/)
    assert.match(text, /Support/)
    assert.doesNotMatch(text, /Licence/)
    assert.match(text, new RegExp(`\\$${decimalString(two.total, 2).replace('.', '\\.')}`))
    await shot(page, 'invoice-editor')
  })

  it('editor: allowances and charges of a line and of the invoice (BG-27/28, BG-20/21) counted as the service counts them', async () => {
    const { page } = cp
    await visit(page, '/', 'New invoice')
    await page.locator('summary', { hasText: 'Unit, VAT, allowances and charges of line 1' }).click()
    await page.getByRole('button', { name: 'Add allowance of line 1' }).click()
    await page.locator('#f-items_0__allowances_0__amount').fill('10.005')
    await page.locator('#f-items_0__allowances_0__reason').fill('Loyalty')
    await page.getByRole('button', { name: 'Add charge', exact: true }).click()
    await page.locator('#f-charges_0__amount').fill('4.99')
    await page.locator('#f-charges_0__reason').fill('Freight')
    await page.locator('#f-charges_0__tax_category').selectOption('S')
    await page.locator('#f-charges_0__tax_rate').fill('7')
    const expected = computeVat({ items: [{ quantity: 1.5, unit_price: 120, allowances: [{ amount: 10.005 }] }], tax_rate: 20, charges: [{ amount: 4.99, tax_category: 'S', tax_rate: 7 }] })
    const total = `$${decimalString(expected.total, 2)}`
    await page.locator('#invoice-total', { hasText: total }).waitFor()
    assert.equal(await page.getByLabel('Amount of line 1').textContent(), `$${decimalString(expected.lines[0]!, 2)}`)
    await page.getByText(`VAT S 7 % on $4.99`).waitFor()
    await previewShown(page)
    // The service's PDF of the same request says the same total.
    const body = { invoice_number: 'INV-001', date: await page.locator('#f-date').inputValue(), currency_symbol: '$', tax_rate: 20, notes: 'Thank you for your business!',
      from: { name: 'Acme Tools Ltd', address: '1 Forge Lane\nSheffield', email: 'billing@acme.test' }, to: { name: 'Globex Corporation', address: '500 Main St\nSpringfield' },
      items: [{ description: 'Consulting', quantity: 1.5, unit_price: 120, allowances: [{ amount: 10.005, reason: 'Loyalty' }] }], charges: [{ amount: 4.99, reason: 'Freight', tax_category: 'S', tax_rate: 7 }] }
    const pdf = await post(api('/invoice/preview'), body, { key: acc.key })
    assert.equal(pdf.status, 200, pdf.text)
    assert.match(pdfText(pdf.body), new RegExp(total.replace(/[$.]/g, (c) => `\\${c}`)))
    await page.getByRole('button', { name: 'Start over' }).click()
  })

  it("editor: the API's refusals appear at their fields (field, BT and rule), and go once fixed", async () => {
    const { page } = cp
    await visit(page, '/', 'New invoice')
    await page.locator('#f-items_0__quantity').fill('0')
    await page.locator('#f-items_0__quantity-error', { hasText: 'items[0].quantity must be > 0' }).waitFor()
    assert.equal(await page.locator('#f-items_0__quantity').getAttribute('aria-invalid'), 'true')
    await page.getByRole('alert').filter({ hasText: 'The service refused this invoice' }).waitFor()
    await page.locator('#f-items_0__quantity').fill('2')
    await page.locator('#f-items_0__quantity-error').waitFor({ state: 'detached' })
    // XRechnung needs more of the parties: each missing term at its field, with its BT.
    await page.getByLabel('Format').selectOption('xrechnung')
    await page.locator('#f-to_country-error', { hasText: /to\.country \(BT-55\) is required/ }).waitFor()
    await page.locator('#f-currency-error', { hasText: /currency \(BT-5\) is required/ }).waitFor()
    // The section holding the field opened by itself.
    assert.equal(await page.locator('#f-to_country').isVisible(), true)
    await shot(page, 'invoice-editor-errors')
    await page.getByLabel('Format').selectOption('pdf')
    await page.locator('#f-to_country-error').waitFor({ state: 'detached' })
  })

  it('downloads: PDF, Factur-X, XRechnung and UBL are the bytes a direct POST /invoice of the same JSON gives', async () => {
    const { page } = cp
    await visit(page, '/', 'New invoice')
    await page.getByLabel('Number', { exact: true }).fill('DL-1')
    await page.getByLabel('Due date').fill('2026-12-31')
    const einvoice: Record<string, string> = {
      '#f-currency': 'EUR',
      '#f-buyer_reference': '04011000-12345-67',
      '#f-from_street': 'Hauptstraße 1',
      '#f-from_city': 'Berlin',
      '#f-from_postal_code': '10115',
      '#f-from_country': 'DE',
      '#f-from_vat_id': 'DE123456789',
      '#f-from_phone': '+49 30 123456',
      '#f-to_street': '3 rue de la Paix',
      '#f-to_city': 'Paris',
      '#f-to_postal_code': '75002',
      '#f-to_country': 'FR',
      '#f-to_vat_id': 'FR12345678901',
      '#f-to_email': 'ap@client.example',
      '#f-payment_iban': 'DE89 3704 0044 0532 0130 00',
      '#f-from_peppol_id': '9930:DE123456789',
      '#f-to_peppol_id': '0009:12345678901234',
    }
    for (const s of ['#f-from_street', '#f-to_street']) await page.locator(s).locator('xpath=ancestor::details').locator('summary').click()
    await page.locator('summary', { hasText: 'More e-invoice fields' }).click()
    for (const [sel, v] of Object.entries(einvoice)) await page.locator(sel).fill(v)
    await previewShown(page)
    for (const [label, format] of [
      ['PDF', undefined],
      ['Factur-X', 'facturx'],
      ['XRechnung', 'xrechnung'],
      ['UBL', 'ubl'],
    ] as const) {
      const file = await downloaded(page, () => page.getByRole('button', { name: `Download ${label}` }).click())
      // The same JSON, posted directly: the editor's request body is rebuilt here from the fields.
      const request = {
        invoice_number: 'DL-1',
        date: await page.locator('#f-date').inputValue(),
        due_date: '2026-12-31',
        currency_symbol: '$',
        tax_rate: 20,
        notes: 'Thank you for your business!',
        currency: 'EUR',
        buyer_reference: '04011000-12345-67',
        from: { name: 'Acme Tools Ltd', address: '1 Forge Lane\nSheffield', email: 'billing@acme.test', phone: '+49 30 123456', street: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country: 'DE', vat_id: 'DE123456789', peppol_id: '9930:DE123456789' },
        to: { name: 'Globex Corporation', address: '500 Main St\nSpringfield', email: 'ap@client.example', street: '3 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR', vat_id: 'FR12345678901', peppol_id: '0009:12345678901234' },
        payment: { iban: 'DE89 3704 0044 0532 0130 00' },
        items: [{ description: 'Consulting', quantity: 1.5, unit_price: 120 }],
        ...(format ? { format } : {}),
      }
      const direct = await post(api('/invoice'), request, { key: acc.key })
      assert.equal(direct.status, 200, direct.text)
      assert.equal(file.name, `DL-1${format ? `-${format}` : ''}.${format === 'xrechnung' || format === 'ubl' ? 'xml' : 'pdf'}`)
      if (format === 'xrechnung' || format === 'ubl') assert.equal(file.bytes.toString('utf8'), direct.text, `${label}: the same XML`)
      else {
        assert.equal(pdfText(file.bytes), pdfText(direct.body))
        assert.ok(samePdf(file.bytes, direct.body), `${label}: the same PDF but for the time it was made`)
      }
    }
    await page.getByText(/Downloaded DL-1-ubl\.xml/).waitFor()
  })

  it('history: the invoices listed newest first, filtered (kept in the address), and downloaded again', async () => {
    const { page } = cp
    await visit(page, '/invoices', 'Invoices')
    await page.getByRole('rowheader', { name: 'DL-1' }).first().waitFor()
    const listed = (await get(api('/invoices?limit=100'), { key: acc.key })).json.invoices
    assert.equal(await page.locator('tbody tr').count(), Math.min(20, listed.length))
    await page.getByLabel('Number contains').fill('dl-')
    await page.getByLabel('Format').selectOption('xrechnung')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL('**/invoices?number=dl-&format=xrechnung')
    await page.locator('caption', { hasText: /^2 invoices/ }).waitFor() // the editor's and the direct one
    await shot(page, 'invoice-history')
    const row = listed.find((r: any) => r.format === 'xrechnung')
    const file = await downloaded(page, () => page.getByRole('link', { name: 'Download DL-1 (xrechnung)' }).first().click())
    assert.equal(file.bytes.toString('utf8'), (await get(`${rig.root}${row.download_url}`, { key: acc.key })).text)
    await page.reload()
    await page.locator('caption', { hasText: /^2 invoices/ }).waitFor()
    assert.equal(await page.getByLabel('Number contains').inputValue(), 'dl-')
  })

  it('a service that cannot be reached: the banner and the invoice console’s own words, then it carries on by itself', async () => {
    const { page } = cp
    await page.route('**/api/v1/invoices?*', (route) => route.abort('connectionrefused'))
    await visit(page, '/invoices', 'Invoices')
    await page.locator('.banner', { hasText: 'The service cannot be reached' }).waitFor()
    await page.locator('.notice-error', { hasText: 'The invoice service cannot be reached (down or restarting). Retrying…' }).waitFor()
    await page.unroute('**/api/v1/invoices?*')
    // The client asks /healthz every second; once it answers, the screen loads again.
    await page.locator('.banner').waitFor({ state: 'detached' })
    await page.getByRole('rowheader', { name: 'DL-1' }).first().waitFor()
    assert.equal(await page.locator('.notice-error').count(), 0)
  })

  it('batches: progress, the row that failed with its error, the ZIP', async () => {
    const { page } = cp
    const rows = [
      { invoice_number: 'B-1', items: [{ description: 'ok', quantity: 1, unit_price: 1 }] },
      { invoice_number: 'B-2', logo_url: `${rig.root}/no-such-logo.png`, items: [{ description: 'bad logo', quantity: 1, unit_price: 1 }] },
    ]
    const b = await call('POST', api('/invoices/batch'), { json: rows, key: acc.key })
    assert.equal(b.status, 202, b.text)
    await visit(page, '/batches', 'Batches')
    await page.getByRole('link', { name: b.json.batch_id, exact: true }).click()
    await page.getByRole('heading', { level: 1, name: `Batch ${b.json.batch_id}` }).waitFor()
    await page.getByText(/Row 1: logo_url could not be fetched/).waitFor({ timeout: 30_000 })
    const zip = await downloaded(page, () => page.getByRole('link', { name: /Download the ZIP \(1 PDFs\)/ }).click())
    assert.equal(zip.bytes.subarray(0, 2).toString('latin1'), 'PK')
    await shot(page, 'invoice-batch')
  })

  it('a received e-invoice: its findings, the readable PDF, and loaded into the editor', async () => {
    const { page } = cp
    const made = await post(api('/invoice'), {
      format: 'xrechnung', invoice_number: 'RE-7', date: '2026-11-02', due_date: '2026-12-02', currency: 'EUR', buyer_reference: '04011000-12345-67',
      from: { name: 'Muster GmbH', street: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country: 'DE', vat_id: 'DE123456789', email: 'b@muster.example', phone: '+49 30 1' },
      to: { name: 'Client SARL', street: '3 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR', vat_id: 'FR12345678901', email: 'ap@client.example' },
      payment: { iban: 'DE89370400440532013000' }, tax_rate: 19,
      items: [{ description: 'Beratung', quantity: 2, unit_price: 100 }],
    }, { key: acc.key })
    assert.equal(made.status, 200, made.text)
    const xml = made.body
    await visit(page, '/read', 'Read a received e-invoice')
    await page.getByLabel('Received e-invoice file').setInputFiles({ name: 'received.xml', mimeType: 'application/xml', buffer: xml })
    await page.getByRole('heading', { name: 'received.xml: invoice RE-7' }).waitFor({ timeout: 20_000 }).catch(async (e) => {
      throw new Error(`${(e as Error).message}; the page says: ${await page.locator('main').textContent()}`)
    })
    await page.getByText('No errors: the document meets the rules it declares.').waitFor()
    await page.getByRole('button', { name: 'Show the readable PDF' }).click()
    await page.locator('iframe[title="Readable PDF of received.xml"]').waitFor()
    await shot(page, 'invoice-read')
    await page.getByRole('button', { name: 'Load into the editor' }).click()
    await page.getByRole('heading', { level: 1, name: 'New invoice' }).waitFor()
    assert.equal(await page.getByLabel('Number', { exact: true }).inputValue(), 'RE-7')
    assert.equal(await page.locator('#f-items_0__description').inputValue(), 'Beratung')
    await page.locator('#invoice-total', { hasText: '238.00' }).waitFor()
    // Read as an XRechnung, it stays one: its preview is the XML.
    assert.equal(await page.getByLabel('Format').inputValue(), 'xrechnung')
    await page.locator('pre.xml-preview', { hasText: '<ram:ID>RE-7</ram:ID>' }).waitFor()
  })

  it('visitors get the demo editor at /, with the way to sign up; its rate limit reads as a message saying when the preview comes back', async () => {
    const { page } = await openInvoiceConsole(rig, null)
    await page.goto('/')
    await page.getByRole('heading', { level: 1, name: 'Invoice demo' }).waitFor()
    await page.getByRole('link', { name: 'Sign up for your own invoices' }).waitFor()
    await previewShown(page)
    await shot(page, 'invoice-demo')
    // Download PDF hands over the PDF just previewed: no second demo request.
    let demoCalls = 0
    page.on('request', (r) => void (r.url().endsWith('/api/v1/demo-invoice') && demoCalls++))
    const file = await downloaded(page, () => page.getByRole('button', { name: 'Download PDF' }).click())
    assert.equal(file.name, 'INV-001.pdf')
    assert.match(pdfText(file.bytes), /Consulting/)
    assert.equal(demoCalls, 0)
    // The rest of the minute's budget of this address, spent elsewhere.
    for (let i = 0; i < 6; i++) await post(api('/demo-invoice'), { items: [{ description: 'x', quantity: 1, unit_price: 1 }] })
    await page.getByLabel('Number', { exact: true }).fill('DEMO-2')
    const note = page.locator('.preview-pane .notice-warn')
    await note.filter({ hasText: /The demo renders 5 previews a minute per visitor and they are used up/ }).waitFor()
    assert.match((await note.textContent())!, /comes back in \d+ s by itself/)
    assert.match((await note.textContent())!, /Sign up for free/)
    await page.context().close()
  })
})
