// Reading e-invoices other software wrote (docs/einvoice-receiving.md, "Received documents in the tests"):
// the CEN/TC 434 examples, the KoSIT XRechnung test suite and Factur-X/ZUGFeRD PDFs of two other
// libraries (test/fixtures/einvoice-received). The official EN 16931 rules (CEN's compiled XSLT,
// run with Saxon-HE) judge each document first; every document they pass must read with no
// finding of severity error, and with the totals BT-106…BT-115 and line net amounts BT-131 the
// document itself states — read from the XML by an XSLT of the test's own, not by the service.
// A document the rules reject must read with each calculation rule they name.
import assert from 'node:assert/strict'
import { corpus } from './helpers/en16931-corpus.ts'
import { en16931Findings, type RuleFinding } from './helpers/en16931-rules.ts'
import { statedValues, type Stated } from './helpers/en16931-stated.ts'
import { canonical } from './helpers/en16931-amounts.ts'
import { calculationIds, errorsOf, fatalIds, findingsOf, show, startReader, type Reader } from './helpers/en16931-reader.ts'

const documents = corpus()

/** What the official rules (validation-1.3.16) reject in the corpus: the test knows the rules ran. */
const REJECTED: Record<string, string[]> = {
  'facturx/horstoeko/pdf_zf_extended_1.pdf': ['BR-CO-12', 'BR-S-08'],
  'kosit/cvd/02.01a-cvd_INVOICE_ubl.xml': ['BR-CL-13'],
  'kosit/cvd/02.01a-cvd_INVOICE_uncefact.xml': ['BR-CL-13'],
  'kosit/extension/04.05a-INVOICE_uncefact.xml': ['BR-CL-10', 'BR-CL-21'],
  'kosit/extension/05.01a-INVOICE_ubl.xml': ['BR-CO-16'],
}

describe('invoice API: reading e-invoices other software wrote (CEN examples, KoSIT test suite, Factur-X PDFs)', () => {
  let reader: Reader
  let rules: Map<string, RuleFinding[]>
  let stated: Map<string, Stated>

  before(async function () {
    this.timeout(180_000)
    const xml = new Map(documents.map((d) => [d.name, d.xml]))
    ;[rules, stated] = await Promise.all([en16931Findings(xml), statedValues(xml)])
    reader = await startReader()
  })
  after(async () => reader?.stop())

  it('the corpus is there (CEN UBL and CII, KoSIT standard and extension, PDFs of two libraries), and the official rules reject exactly the documents known to be wrong', () => {
    for (const folder of ['cen/ubl/', 'cen/cii/', 'kosit/standard/', 'kosit/extension/', 'facturx/akretion/', 'facturx/horstoeko/']) {
      assert.ok(documents.some((d) => d.name.startsWith(folder)), `nothing in ${folder}`)
    }
    assert.ok(documents.length >= 90, `${documents.length} documents`)
    const rejected = Object.fromEntries(documents.map((d) => [d.name, fatalIds(rules.get(d.name)!)]).filter(([, ids]) => ids!.length > 0))
    assert.deepEqual(rejected, REJECTED)
  })

  for (const doc of documents) {
    it(`${doc.name}: as the official rules judge it — passed: no error finding, the stated totals and line net amounts; rejected: its calculation rules named`, async () => {
      const official = rules.get(doc.name)!
      const fatal = fatalIds(official)
      const res = await reader.read(doc.body, doc.contentType)
      const findings = findingsOf(res, doc.name)
      if (fatal.length > 0) {
        // Rejected: every calculation rule the official rules name, the read names as an error.
        const named = calculationIds(errorsOf(findings).map((f) => f.rule))
        for (const id of calculationIds(fatal)) assert.ok(named.includes(id), `${doc.name}: the official rules name ${id}, the read does not:\n    ${show(findings)}`)
        return
      }
      assert.deepEqual(errorsOf(findings), [], `${doc.name} passes the official EN 16931 rules but reads with errors:\n    ${show(errorsOf(findings))}`)
      const own = stated.get(doc.name)!
      const s = res.json.stated
      assert.ok(s && s.totals && Array.isArray(s.lines), `${doc.name}: no stated amounts in ${res.text.slice(0, 500)}`)
      assert.equal(s.currency, own.currency, `${doc.name}: BT-5`)
      // Every total the document states, as it states it; none it does not.
      const expected = Object.fromEntries(Object.entries(own.totals).map(([bt, v]) => [bt.replace('-', ''), canonical(v)]))
      const got = Object.fromEntries(Object.entries(s.totals as Record<string, string>).filter(([, v]) => v !== undefined).map(([bt, v]) => [bt, canonical(String(v))]))
      assert.deepEqual(got, expected, `${doc.name}: stated totals`)
      assert.deepEqual(
        s.lines.map((l: { id?: string; net_amount?: string }) => [l.id, l.net_amount === undefined ? undefined : canonical(l.net_amount)]),
        own.lines.map((l) => [l.id, canonical(l.net)]),
        `${doc.name}: line ids (BT-126) and net amounts (BT-131)`,
      )
      assert.deepEqual(
        s.vat_breakdown.map((v: { category?: string; taxable?: string; tax?: string }) => [v.category, canonical(v.taxable ?? ''), canonical(v.tax ?? '')]),
        own.vat.map((v) => [v.category, canonical(v.taxable), canonical(v.tax)]),
        `${doc.name}: VAT breakdown (BT-118, BT-116, BT-117)`,
      )
      if (doc.attachment) assert.equal(res.json.attachment, doc.attachment, `${doc.name}: the attachment read`)
    })
  }
})
