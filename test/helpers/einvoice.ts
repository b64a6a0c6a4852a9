// E-invoice checks for tests: XML against the CII D16B and UBL 2.1 schemas (xmllint; where the
// schemas are: docs/testing.md "E-invoice schemas"), the Factur-X parts of a PDF/A-3 (its embedded
// XML, XMP, fonts), and a valid EN 16931 request every format accepts.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'
import { invoiceBodySchema } from '../../src/invoice/invoice-schema.ts'
import { HttpError } from '../../src/platform/http/errors.ts'
import { parseOrThrow } from '../../src/platform/http/validate.ts'

// The schemas are not in the repository (their licences ask for unmodified redistribution with
// notices, and they are data, not code): EINVOICE_XSD_DIR, or shared/einvoice-xsd beside the
// clone, as CI lays it out.
const XSD = resolve(process.env.EINVOICE_XSD_DIR ?? fileURLToPath(new URL('../../../shared/einvoice-xsd', import.meta.url)))
export const CII_XSD = join(XSD, 'cii-d16b/CrossIndustryInvoice_100pD16B.xsd')
export const UBL_INVOICE_XSD = join(XSD, 'ubl-2.1/maindoc/UBL-Invoice-2.1.xsd')
export const UBL_CREDIT_NOTE_XSD = join(XSD, 'ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd')
const XSD_PRESENT = [CII_XSD, UBL_INVOICE_XSD, UBL_CREDIT_NOTE_XSD].every((f) => existsSync(f))
const XSD_MISSING =
  `XSD validation skipped: the CII D16B and UBL 2.1 schemas are not in ${XSD}. ` +
  'To validate, set EINVOICE_XSD_DIR to a folder holding cii-d16b/ and ubl-2.1/ (docs/testing.md, "E-invoice schemas").'
let skippedValidations = 0

function tmp(name: string, data: Buffer | string): string {
  const f = join(mkdtempSync(join(tmpdir(), 'qw-einv-')), name)
  writeFileSync(f, data)
  return f
}

/** xmllint --schema; throws with xmllint's findings when the XML does not validate. Without the
 * schemas (and outside CI) it validates nothing and reports the skip with how to enable it. */
export function xsdValidate(xml: Buffer | string, xsd: string): void {
  if (!XSD_PRESENT) {
    // .ci/run sets EINVOICE_XSD_REQUIRED: there a missing folder fails the test instead.
    if (process.env.EINVOICE_XSD_REQUIRED) throw new Error(`${XSD_MISSING} (EINVOICE_XSD_REQUIRED is set)`)
    // Only this check is left out: the test's other assertions still run. Said once as it
    // happens and counted at the end of the run, so a clone without the schemas knows.
    if (skippedValidations++ === 0) console.warn(`\n  ! ${XSD_MISSING}\n`)
    return
  }
  try {
    execFileSync('xmllint', ['--noout', '--nonet', '--schema', xsd, tmp('doc.xml', xml)], { stdio: 'pipe' })
  } catch (err) {
    throw new Error(`XML does not validate against ${xsd}:\n${(err as { stderr?: Buffer }).stderr?.toString() ?? err}`)
  }
}

/**
 * The schema folder for a test that hands it to the service (EINVOICE_XSD_DIR of the received
 * e-invoice checks), found as xsdValidate finds it; undefined (the test skips) where it is missing,
 * unless EINVOICE_XSD_REQUIRED is set: then a missing folder fails, as in CI.
 */
export function xsdDirForService(): string | undefined {
  if (XSD_PRESENT) return XSD
  if (process.env.EINVOICE_XSD_REQUIRED) throw new Error(`${XSD_MISSING} (EINVOICE_XSD_REQUIRED is set)`)
  return undefined
}

/** The schema of a UBL document by its root element. */
export function ublXsdOf(xml: string): string {
  return /<CreditNote[\s>]/.test(xml) ? UBL_CREDIT_NOTE_XSD : UBL_INVOICE_XSD
}

/** Embedded files of a PDF, extracted with qpdf: name → bytes. */
export function pdfAttachments(pdf: Buffer): Map<string, Buffer> {
  const f = tmp('doc.pdf', pdf)
  const list = execFileSync('qpdf', ['--list-attachments', f], { encoding: 'utf8' })
  const out = new Map<string, Buffer>()
  for (const m of list.matchAll(/^(\S[^\n]*?) -> /gm)) {
    const name = m[1]!
    out.set(name, execFileSync('qpdf', [f, `--show-attachment=${name}`], { maxBuffer: 64 << 20 }))
  }
  return out
}

/** Every font of the PDF with whether it is embedded (pdffonts). */
export function pdfFonts(pdf: Buffer): { name: string; embedded: boolean }[] {
  const text = execFileSync('pdffonts', [tmp('doc.pdf', pdf)], { encoding: 'utf8' })
  return text
    .split('\n')
    .slice(2)
    .filter((l) => l.trim())
    .map((l) => {
      const cols = l.trim().split(/\s+/)
      // name type [encoding…] emb sub uni object ID: "emb" is the 5th column from the end.
      return { name: cols[0]!, embedded: cols[cols.length - 5] === 'yes' }
    })
}

/** The raw catalog-level XMP packet and the whole file as latin1 text, for structure checks. */
export function pdfRaw(pdf: Buffer): string {
  const f = tmp('doc.pdf', pdf)
  const qdf = f.replace(/\.pdf$/, '.qdf.pdf')
  execFileSync('qpdf', ['--qdf', '--object-streams=disable', f, qdf])
  return readFileSync(qdf).toString('latin1')
}

/** The document's XMP metadata packet (the catalog's /Metadata stream), as its bytes. */
export function pdfXmp(pdf: Buffer): Buffer {
  const f = tmp('doc.pdf', pdf)
  const ref = (text: string, key: string) => {
    const m = new RegExp(`/${key} (\\d+) (\\d+) R`).exec(text)
    if (!m) throw new Error(`no /${key} in ${text.slice(0, 300)}`)
    return `${m[1]},${m[2]}`
  }
  const root = ref(execFileSync('qpdf', ['--show-object=trailer', f], { encoding: 'latin1' }), 'Root')
  const meta = ref(execFileSync('qpdf', [`--show-object=${root}`, f], { encoding: 'latin1' }), 'Metadata')
  return execFileSync('qpdf', [`--show-object=${meta}`, '--filtered-stream-data', f], { maxBuffer: 16 << 20 })
}

/** A request that carries every term facturx, xrechnung and ubl need (German seller, French buyer). */
export function fullRequest(extra: Record<string, unknown> = {}): Record<string, any> {
  // Peppol (ubl) addresses both parties by participant id, not e-mail (docs/einvoice.md, "Peppol").
  const peppol = extra.format === 'ubl' ? [{ peppol_id: '0204:991-12345-67' }, { peppol_id: '0009:12345678900015' }] : [{}, {}]
  return {
    invoice_number: 'RE-2026-0042',
    date: '2026-11-02',
    due_date: '2026-12-02',
    currency: 'EUR',
    from: {
      name: 'Muster GmbH', street: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country: 'DE',
      vat_id: 'DE123456789', email: 'billing@muster.example', phone: '+49 30 123456', contact: 'Erika Muster', ...peppol[0],
    },
    to: { name: 'Client SARL', street: '3 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR', vat_id: 'FR12345678901', email: 'ap@client.example', ...peppol[1] },
    buyer_reference: '04011000-12345-67',
    payment: { iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX', reference: 'RE-2026-0042', terms: 'Net 30 days' },
    items: [
      { description: 'Consulting', quantity: 10, unit_price: 120, unit: 'HUR' },
      { description: 'Book', quantity: 2, unit_price: 19.99, tax_rate: 7 },
      { description: 'Licence', quantity: 1.5, unit_price: 333.333 },
    ],
    tax_rate: 19,
    discount: 50,
    ...extra,
  }
}

process.once('exit', () => {
  if (skippedValidations > 0) console.warn(`  ! ${skippedValidations} XSD validation(s) skipped. ${XSD_MISSING}`)
})

/** The 400 message the invoice schema gives a request body, or null when it is accepted. */
export function refusalOf(body: unknown): string | null {
  try {
    parseOrThrow(invoiceBodySchema, body)
    return null
  } catch (err) {
    assert.ok(err instanceof HttpError && err.status === 400, `not a 400: ${err}`)
    return err.message
  }
}
