// Received e-invoices broken on purpose (docs/einvoice-receiving.md, "Received documents in the tests"): copies
// of corpus documents the official EN 16931 rules pass, each with one amount or one VAT exemption
// reason changed (nothing else), UBL, CII and a Factur-X PDF. The official rules must name the
// rule the change breaks — so the copy really breaks it — and the read must name it too, as an
// error with its business term, the amount the document states and the one the rule computes
// from the document's own values (worked out here from what the copy states, read by the test's
// own XSLT). Beyond the one rule, the read names the same calculation rules as the official ones.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { corpus } from './helpers/en16931-corpus.ts'
import { en16931Findings, fatal, syntaxOf, type RuleFinding, type Syntax } from './helpers/en16931-rules.ts'
import { statedValues, type Stated } from './helpers/en16931-stated.ts'
import { percentOf, text, units } from './helpers/en16931-amounts.ts'
import { addTo, remove, type Step } from './helpers/en16931-edit.ts'
import { calculationIds, errorsOf, fatalIds, findingsOf, show, startReader, type ReadFinding, type Reader } from './helpers/en16931-reader.ts'

const UBL_TOTALS = ['cac:LegalMonetaryTotal']
const CII_SETTLEMENT = ['rsm:SupplyChainTradeTransaction', 'ram:ApplicableHeaderTradeSettlement']
const CII_TOTALS = [...CII_SETTLEMENT, 'ram:SpecifiedTradeSettlementHeaderMonetarySummation']
/** A rate as the document may write it: 25, 25.0, 25.00. */
const rateText = (rate: string) => `${rate.replace('.', '\\.')}(?:\\.0*)?`

/** Where each amount is, per syntax (EN 16931's UBL and CII bindings). */
const PATHS: Record<Syntax, { total: Record<string, Step[]>; line1Net: Step[]; breakdown: (category: string, rate?: string) => Step[]; taxable: string; tax: string; exemption: string[] }> = {
  ubl: {
    total: {
      'BT-106': [...UBL_TOTALS, 'cbc:LineExtensionAmount'],
      'BT-107': [...UBL_TOTALS, 'cbc:AllowanceTotalAmount'],
      'BT-108': [...UBL_TOTALS, 'cbc:ChargeTotalAmount'],
      'BT-109': [...UBL_TOTALS, 'cbc:TaxExclusiveAmount'],
      'BT-110': ['cac:TaxTotal', 'cbc:TaxAmount'],
      'BT-112': [...UBL_TOTALS, 'cbc:TaxInclusiveAmount'],
      'BT-115': [...UBL_TOTALS, 'cbc:PayableAmount'],
    },
    line1Net: [{ tag: 'cac:InvoiceLine', where: /./ }, 'cbc:LineExtensionAmount'],
    breakdown: (category, rate) => [
      'cac:TaxTotal',
      { tag: 'cac:TaxSubtotal', where: new RegExp(`<cbc:ID>\\s*${category}\\s*</cbc:ID>${rate ? `[\\s\\S]*<cbc:Percent>\\s*${rateText(rate)}\\s*<` : ''}`) },
    ],
    taxable: 'cbc:TaxableAmount',
    tax: 'cbc:TaxAmount',
    exemption: ['cac:TaxCategory', 'cbc:TaxExemptionReason', 'cbc:TaxExemptionReasonCode'],
  },
  cii: {
    total: {
      'BT-106': [...CII_TOTALS, 'ram:LineTotalAmount'],
      'BT-107': [...CII_TOTALS, 'ram:AllowanceTotalAmount'],
      'BT-108': [...CII_TOTALS, 'ram:ChargeTotalAmount'],
      'BT-109': [...CII_TOTALS, 'ram:TaxBasisTotalAmount'],
      'BT-110': [...CII_TOTALS, 'ram:TaxTotalAmount'],
      'BT-112': [...CII_TOTALS, 'ram:GrandTotalAmount'],
      'BT-115': [...CII_TOTALS, 'ram:DuePayableAmount'],
    },
    line1Net: ['rsm:SupplyChainTradeTransaction', 'ram:IncludedSupplyChainTradeLineItem', 'ram:SpecifiedLineTradeSettlement', 'ram:SpecifiedTradeSettlementLineMonetarySummation', 'ram:LineTotalAmount'],
    breakdown: (category, rate) => [
      ...CII_SETTLEMENT,
      { tag: 'ram:ApplicableTradeTax', where: new RegExp(`^(?=[\\s\\S]*<ram:CategoryCode>\\s*${category}\\s*<)${rate ? `(?=[\\s\\S]*<ram:RateApplicablePercent>\\s*${rateText(rate)}\\s*<)` : ''}`) },
    ],
    taxable: 'ram:BasisAmount',
    tax: 'ram:CalculatedAmount',
    exemption: ['', 'ram:ExemptionReason', 'ram:ExemptionReasonCode'],
  },
}

const sum = (amounts: string[]) => amounts.reduce((a, x) => a + units(x), 0n)
const total = (s: Stated, bt: string) => (s.totals[bt] === undefined ? 0n : units(s.totals[bt]!))
const sameRate = (a: string, b: string) => units(a || '0', 4) === units(b || '0', 4)

/** One way to break one rule, and what the read must then say. */
interface Break {
  label: string
  rule: string
  bt: RegExp
  apply(xml: string, syntax: Syntax): string
  /** The amount the document states and the one the rule computes, from what the copy states. */
  values?(s: Stated): { stated: bigint; computed: bigint }
}

const totalOff = (bt: string, rule: string, computed: (s: Stated) => bigint): Break => ({
  label: `${bt} off by 1.00`,
  rule,
  bt: new RegExp(`^${bt}$`),
  apply: (xml, syntax) => addTo(xml, PATHS[syntax].total[bt]!, '1.00'),
  values: (s) => ({ stated: total(s, bt), computed: computed(s) }),
})

const breakdownOf = (s: Stated, category: string, rate: string) => {
  const v = s.vat.find((x) => x.category === category && sameRate(x.rate, rate))
  if (!v) throw new Error(`no VAT breakdown ${category} ${rate}`)
  return v
}

const BREAKS: Break[] = [
  totalOff('BT-106', 'BR-CO-10', (s) => sum(s.lines.map((l) => l.net))),
  {
    label: "line 1's BT-131 off by 10.00",
    rule: 'BR-CO-10',
    bt: /^BT-106$/,
    apply: (xml, syntax) => addTo(xml, PATHS[syntax].line1Net, '10.00'),
    values: (s) => ({ stated: total(s, 'BT-106'), computed: sum(s.lines.map((l) => l.net)) }),
  },
  totalOff('BT-107', 'BR-CO-11', (s) => sum(s.adjustments.filter((a) => !a.charge).map((a) => a.amount))),
  totalOff('BT-108', 'BR-CO-12', (s) => sum(s.adjustments.filter((a) => a.charge).map((a) => a.amount))),
  totalOff('BT-109', 'BR-CO-13', (s) => total(s, 'BT-106') - total(s, 'BT-107') + total(s, 'BT-108')),
  totalOff('BT-110', 'BR-CO-14', (s) => sum(s.vat.map((v) => v.tax))),
  totalOff('BT-112', 'BR-CO-15', (s) => total(s, 'BT-109') + total(s, 'BT-110')),
  totalOff('BT-115', 'BR-CO-16', (s) => total(s, 'BT-112') - total(s, 'BT-113') + total(s, 'BT-114')),
  {
    label: 'BT-117 of the VAT breakdown S 25 off by 5.00',
    rule: 'BR-CO-17',
    bt: /^BT-117$/,
    apply: (xml, syntax) => addTo(xml, [...PATHS[syntax].breakdown('S', '25'), PATHS[syntax].tax], '5.00'),
    values: (s) => {
      const v = breakdownOf(s, 'S', '25')
      return { stated: units(v.tax), computed: percentOf(units(v.taxable), v.rate) }
    },
  },
  {
    label: 'BT-116 of the VAT breakdown S 25 off by 5.00',
    rule: 'BR-S-08',
    bt: /^BT-116$/,
    apply: (xml, syntax) => addTo(xml, [...PATHS[syntax].breakdown('S', '25'), PATHS[syntax].taxable], '5.00'),
    values: (s) => {
      const v = breakdownOf(s, 'S', '25')
      const mine = (x: { category: string; rate: string }) => x.category === 'S' && sameRate(x.rate, '25')
      const computed =
        sum(s.lines.filter(mine).map((l) => l.net)) +
        sum(s.adjustments.filter((a) => a.charge && mine(a)).map((a) => a.amount)) -
        sum(s.adjustments.filter((a) => !a.charge && mine(a)).map((a) => a.amount))
      return { stated: units(v.taxable), computed }
    },
  },
  {
    label: 'the exemption reason (BT-120, BT-121) of the VAT breakdown E removed',
    rule: 'BR-E-10',
    bt: /^BT-12[01]$/,
    apply: (xml, syntax) => {
      const [within, ...tags] = PATHS[syntax].exemption
      const at = [...PATHS[syntax].breakdown('E'), ...(within ? [within] : [])]
      let out = xml
      for (const tag of tags) {
        try {
          out = remove(out, [...at, tag!])
        } catch {
          // this document has only one of the two
        }
      }
      if (out === xml) throw new Error('no exemption reason to remove')
      return out
    },
  },
]

/** The business case broken every way: the CEN example with S 25, S 15, E, allowances, charges and a paid amount. */
const BASES = ['cen/ubl/guide-example2.xml', 'cen/cii/CII_example2.xml']
/** And BR-CO-16 where the document has a rounding amount (BT-114), and in a Factur-X PDF. */
const ROUNDING = ['kosit/standard/01.17a-INVOICE_ubl.xml', 'kosit/standard/01.17a-INVOICE_uncefact.xml']
const PDF = 'facturx/akretion/invoice_EN16931.pdf'

interface Copy {
  name: string
  of: string
  brk: Break
  xml: string
  body: Buffer
  contentType: string
}

/**
 * The PDF with its invoice attachment's data replaced in place (qpdf's JSON update of that one
 * stream object, written uncompressed): the file specification, the /AF association and every
 * other object stay as they were, so the copy differs from a PDF the library wrote only in the XML.
 */
function withAttachment(pdf: Buffer, key: string, xml: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'qw-broken-pdf-'))
  const input = join(dir, 'in.pdf')
  writeFileSync(input, pdf)
  const listing = execFileSync('qpdf', ['--list-attachments', '--verbose', input], { encoding: 'utf8' })
  const entry = listing.slice(listing.indexOf(`${key} -> `))
  const stream = /all data streams:\s*\/F -> (\d+),(\d+)/.exec(entry)
  if (!stream) throw new Error(`no data stream for ${key} in:\n${listing}`)
  const head = JSON.parse(execFileSync('qpdf', [input, '--json-output=2', '--json-key=qpdf', '--json-object=trailer'], { encoding: 'utf8' })).qpdf[0]
  const data = Buffer.from(xml)
  const update = {
    qpdf: [
      head,
      { [`obj:${stream[1]} ${stream[2]} R`]: { stream: { dict: { '/Type': '/EmbeddedFile', '/Subtype': '/text/xml', '/Params': { '/Size': data.length } }, data: data.toString('base64') } } },
    ],
  }
  writeFileSync(join(dir, 'update.json'), JSON.stringify(update))
  execFileSync('qpdf', [input, `--update-from-json=${join(dir, 'update.json')}`, join(dir, 'out.pdf')])
  return readFileSync(join(dir, 'out.pdf'))
}

function copies(): Copy[] {
  const docs = new Map(corpus().map((d) => [d.name, d]))
  const out: Copy[] = []
  const make = (of: string, brk: Break) => {
    const doc = docs.get(of)
    if (!doc) throw new Error(`${of} is not in the corpus`)
    const xml = brk.apply(doc.xml.toString('utf8'), syntaxOf(doc.xml))
    const body = doc.contentType === 'application/pdf' ? withAttachment(doc.body, doc.attachment!, xml) : Buffer.from(xml)
    out.push({ name: `${of}: ${brk.label}`, of, brk, xml, body, contentType: doc.contentType })
  }
  for (const of of BASES) for (const brk of BREAKS) make(of, brk)
  const co16 = BREAKS.find((b) => b.rule === 'BR-CO-16')!
  for (const of of [...ROUNDING, PDF]) make(of, co16)
  return out
}

describe('invoice API: received e-invoices broken on purpose, one rule each, are named by that rule', () => {
  const broken = copies()
  let reader: Reader
  let rules: Map<string, RuleFinding[]>
  let stated: Map<string, Stated>

  before(async function () {
    this.timeout(180_000)
    const xml = new Map<string, string | Buffer>(broken.map((c) => [c.name, c.xml]))
    const originals = new Set(broken.map((c) => c.of))
    for (const d of corpus()) if (originals.has(d.name)) xml.set(`original ${d.name}`, d.xml)
    ;[rules, stated] = await Promise.all([en16931Findings(xml), statedValues(xml)])
    reader = await startReader()
  })
  after(async () => reader?.stop())

  it('the documents broken are ones the official rules pass as they are', () => {
    for (const of of new Set(broken.map((c) => c.of))) assert.deepEqual(fatal(rules.get(`original ${of}`)!), [], of)
  })

  for (const copy of broken) {
    it(`${copy.name}: ${copy.brk.rule}`, async () => {
      const official = rules.get(copy.name)!
      assert.ok(fatalIds(official).includes(copy.brk.rule), `the official rules do not name ${copy.brk.rule} (the copy does not break it): ${fatalIds(official).join(', ')}`)
      const findings = findingsOf(await reader.read(copy.body, copy.contentType), copy.name)
      const errors = errorsOf(findings)
      const named = errors.filter((f) => f.rule === copy.brk.rule)
      assert.ok(named.length > 0, `the read does not name ${copy.brk.rule}:\n    ${show(findings)}`)
      const values = copy.brk.values?.(stated.get(copy.name)!)
      const matches = (f: ReadFinding) =>
        copy.brk.bt.test(f.bt ?? '') &&
        (!values || (f.stated !== undefined && f.computed !== undefined && units(f.stated) === values.stated && units(f.computed) === values.computed))
      const want = values ? `, stated ${text(values.stated)}, computed ${text(values.computed)}` : ''
      assert.ok(named.some(matches), `the read names ${copy.brk.rule} but not with ${copy.brk.bt.source}${want}:\n    ${show(named)}`)
      assert.deepEqual(calculationIds(errors.map((f) => f.rule)), calculationIds(fatalIds(official)), `calculation rules, read vs official:\n    ${show(errors)}`)
    })
  }
})
