// The EPC payment QR with an RF creditor reference (docs/einvoice.md, "Payment QR codes"): the
// reference goes into the structured field (EPC069-12 field 10), normalised, and the unstructured
// field stays empty; any other reference stays text; an RF reference with wrong check digits is
// a 400. zbarimg reads the code from the rendered page; the check digits are verified here with
// ISO 11649's mod 97, written in the test.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderInvoicePdf } from '../src/invoice/pdf/thread-render-pdf.ts'
import { invoiceBodySchema } from '../src/invoice/invoice-schema.ts'
import { HttpError } from '../src/platform/http/errors.ts'
import { parseOrThrow } from '../src/platform/http/validate.ts'
import { fullRequest } from './helpers/einvoice.ts'

/** The payload of the QR code on page 1, as zbarimg decodes it from a 200 dpi rendering (its own trailing newline removed). */
async function decodedEpc(reference: string): Promise<string[]> {
  const pdf = await renderInvoicePdf(invoiceBodySchema.parse(fullRequest({ payment_qr: 'epc', payment: { ...fullRequest().payment, reference } })), { today: '2026-11-02' })
  const dir = mkdtempSync(join(tmpdir(), 'qw-epc-'))
  writeFileSync(join(dir, 'doc.pdf'), pdf)
  execFileSync('pdftoppm', ['-r', '200', '-png', '-singlefile', '-f', '1', '-l', '1', join(dir, 'doc.pdf'), join(dir, 'page')])
  return execFileSync('zbarimg', ['-q', '--raw', join(dir, 'page.png')], { encoding: 'utf8' }).replace(/\n$/, '').split('\n')
}

/** ISO 11649: move "RFkk" to the end, letters to numbers (A = 10 … Z = 35), the whole mod 97 is 1. */
function iso11649Valid(ref: string): boolean {
  const moved = ref.slice(4) + ref.slice(0, 4)
  let rem = 0
  for (const ch of moved) for (const d of /[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch) rem = (rem * 10 + Number(d)) % 97
  return rem === 1
}

const head = ['BCD', '002', '1', 'SCT', 'COBADEFFXXX', 'Muster GmbH', 'DE89370400440532013000', 'EUR2006.42', '']

describe('EPC payment QR: RF creditor references in the structured field', () => {
  for (const [sent, rf] of [['RF18 5390 0754 7034', 'RF18539007547034'], ['rf47 a1b2 c3', 'RF47A1B2C3']]) {
    it(`"${sent}" is written as ${rf} in field 10, field 11 empty`, async () => {
      assert.equal(iso11649Valid(rf), true, 'the example itself is a valid reference')
      const fields = await decodedEpc(sent)
      assert.deepEqual(fields, [...head, rf, ''])
      assert.equal(iso11649Valid(fields[9]!), true)
    })
  }

  it('any other reference is the unstructured remittance text (field 11)', async () => {
    assert.deepEqual(await decodedEpc('Rechnung RE-2026-0042'), [...head, '', 'Rechnung RE-2026-0042'])
  })

  it('an RF reference with wrong check digits is a 400 naming payment.reference and BT-83', () => {
    assert.equal(iso11649Valid('RF19539007547034'), false)
    try {
      parseOrThrow(invoiceBodySchema, fullRequest({ payment_qr: 'epc', payment: { ...fullRequest().payment, reference: 'RF19 5390 0754 7034' } }))
      assert.fail('accepted')
    } catch (err) {
      assert.ok(err instanceof HttpError && err.status === 400, String(err))
      assert.equal(err.message, 'payment.reference (BT-83) is written as an RF creditor reference but its check digits are wrong (ISO 11649) for payment_qr epc')
    }
  })
})
