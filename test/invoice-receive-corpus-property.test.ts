// Property (docs/einvoice-receiving.md, "Received documents in the tests"): for generated EN 16931 invoices —
// any VAT category, returns, allowances and charges, paid and rounding amounts, up to two amounts
// changed — the calculation rules the read names as errors are exactly those the official EN 16931
// rules name as fatal, per document, in UBL and in CII (whose official rules differ in places:
// some UBL rules allow a difference below 1.00 that the CII ones do not). The documents are drawn
// with fast-check's sample (seeded; FC_SEED, FC_RUNS per syntax) and judged by the official
// rules in one Saxon run per syntax, so the property costs seconds, not a JVM per document.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { documentArb, toXml, type Generated } from './helpers/en16931-generate.ts'
import { en16931Findings, type RuleFinding } from './helpers/en16931-rules.ts'
import { calculationIds, errorsOf, fatalIds, findingsOf, show, startReader, type Reader } from './helpers/en16931-reader.ts'

// A fixed seed unless one is given (FC_SEED=<n>, or FC_SEED=random to explore): the suite stays
// deterministic, and a new seed is a deliberate exploration whose finds become fixes.
const seed = process.env.FC_SEED === 'random' ? Date.now() % 2 ** 31 : Number(process.env.FC_SEED ?? 20261128)
const runs = Number(process.env.FC_RUNS ?? 30)

/**
 * The official UBL BR-S-08 has a second branch written for credit notes that an Invoice meets too
 * when a document-level allowance or charge has the category and rate: it then passes when BT-116
 * is within 1.00 of those allowances and charges alone, the lines left out. The read keeps to the
 * rule as EN 16931 states it (lines, charges and allowances) and names the difference; on such a
 * document a BR-S-08 that the official rules miss is expected (docs/einvoice-receiving.md).
 */
function officialMissesBrS08(c: Case): boolean {
  if (c.doc.syntax !== 'ubl') return false
  return c.doc.breakdown.some((b) => {
    const own = c.doc.adjustments.filter((a) => a.category === 'S' && a.rate === b.rate)
    if (b.category !== 'S' || own.length === 0) return false
    const alone = own.reduce((t, a) => t + (a.charge ? a.amount : -a.amount), 0n)
    const gap = b.taxable - alone
    return gap > -100n && gap < 100n
  })
}

interface Case {
  name: string
  doc: Generated
  xml: string
}

const cases: Case[] = (['ubl', 'cii'] as const).flatMap((syntax, i) =>
  fc.sample(documentArb(syntax), { seed: seed + i, numRuns: runs }).map((doc, n) => ({ name: `${syntax}-${n + 1}`, doc, xml: toXml(doc, n + 1) })),
)

describe(`invoice API: the read's calculation findings agree with the official EN 16931 rules on generated invoices (FC_SEED=${seed}, ${runs} per syntax)`, () => {
  let reader: Reader
  let rules: Map<string, RuleFinding[]>

  before(async function () {
    this.timeout(180_000)
    rules = await en16931Findings(new Map(cases.map((c) => [c.name, c.xml])))
    reader = await startReader()
  })
  after(async () => reader?.stop())

  it('the generated documents break no rule but calculation rules (the generator writes valid EN 16931 apart from the amounts it changes), and some of them break none', () => {
    const other = cases.flatMap((c) => rules.get(c.name)!.filter((f) => f.flag === 'fatal' && calculationIds([f.id]).length === 0).map((f) => `${c.name}: ${f.id} ${f.text}`))
    assert.deepEqual(other, [], `FC_SEED=${seed}`)
    assert.ok(cases.some((c) => fatalIds(rules.get(c.name)!).length === 0), `FC_SEED=${seed}: no valid document drawn`)
    assert.ok(cases.some((c) => fatalIds(rules.get(c.name)!).length > 0), `FC_SEED=${seed}: no broken document drawn`)
  })

  it('per document: the read names as errors exactly the calculation rules the official rules name; a document they pass reads with no error', async function () {
    this.timeout(120_000)
    const disagreements: string[] = []
    let firstXml: string | undefined
    for (const c of cases) {
      let official = calculationIds(fatalIds(rules.get(c.name)!))
      const findings = findingsOf(await reader.read(c.xml, 'application/xml'), c.name)
      const errors = errorsOf(findings)
      const read = calculationIds(errors.map((f) => f.rule))
      if (read.includes('BR-S-08') && !official.includes('BR-S-08') && officialMissesBrS08(c)) official = calculationIds([...official, 'BR-S-08'])
      const valid = official.length === 0
      if (JSON.stringify(read) !== JSON.stringify(official) || (valid && errors.length > 0)) {
        disagreements.push(`${c.name} (changed: ${c.doc.perturbed.join('; ') || 'nothing'}): official [${official.join(', ')}], read [${read.join(', ')}]\n    ${show(errors)}`)
        firstXml ??= c.xml
      }
    }
    assert.equal(disagreements.length, 0, `FC_SEED=${seed}: ${disagreements.length} of ${cases.length} documents disagree:\n${disagreements.join('\n')}\n\nThe first one:\n${firstXml}`)
  })
})
