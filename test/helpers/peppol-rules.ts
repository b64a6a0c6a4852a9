// The official Schematron rules — Peppol BIS Billing 3.0 for `ubl` (PEPPOL-EN16931-UBL.sch) and the
// CEN EN 16931 rules shipped with it for UBL and CII (CEN-EN16931-UBL.sch, CEN-EN16931-CII.sch) —
// compiled with SchXslt and run with Saxon-HE (Debian's libsaxonhe-java). The rule files are not in the repository (fetched
// for testing, as docs/einvoice.md "Peppol BIS rules in the tests" says): PEPPOL_RULES_DIR, or
// shared/peppol-rules beside the clone. Where they are missing the check is skipped and the run
// says so, unless PEPPOL_RULES_REQUIRED is set.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const DIR = resolve(process.env.PEPPOL_RULES_DIR ?? fileURLToPath(new URL('../../../shared/peppol-rules', import.meta.url)))
const SAXON = process.env.SAXON_JAR ?? '/usr/share/java/Saxon-HE.jar'
export const RULE_SETS = ['PEPPOL-EN16931-UBL', 'CEN-EN16931-UBL', 'CEN-EN16931-CII'] as const
export type RuleSet = (typeof RULE_SETS)[number]
const PIPELINE = join(DIR, 'schxslt', 'pipeline-for-svrl.xsl')
const MISSING =
  `Peppol BIS rules skipped: ${RULE_SETS.map((r) => `${r}.sch`).join(', ')} and schxslt/ not in ${DIR}, or no Saxon-HE at ${SAXON}. ` +
  'Set PEPPOL_RULES_DIR (docs/einvoice.md, "Peppol BIS rules in the tests").'
let skipped = 0

export const peppolRulesPresent = () => existsSync(SAXON) && existsSync(PIPELINE) && RULE_SETS.every((r) => existsSync(join(DIR, `${r}.sch`)))

const saxon = (args: string[]) => execFileSync('java', ['-cp', SAXON, 'net.sf.saxon.Transform', ...args], { stdio: 'pipe', maxBuffer: 64 << 20 })

/** The rule set compiled to XSLT once per content (kept in the temp folder between runs). */
function compiled(ruleSet: string): string {
  const sch = join(DIR, `${ruleSet}.sch`)
  const hash = createHash('sha256').update(readFileSync(sch)).digest('hex').slice(0, 16)
  const dir = join(tmpdir(), 'qw-peppol-rules')
  mkdirSync(dir, { recursive: true })
  const xsl = join(dir, `${ruleSet}-${hash}.xsl`)
  if (!existsSync(xsl)) saxon([`-s:${sch}`, `-xsl:${PIPELINE}`, `-o:${xsl}`])
  return xsl
}

export interface Finding {
  document: string
  ruleSet: string
  id: string
  flag: string
  text: string
}

/**
 * Every failed assertion of the rule sets over the documents (name → XML), one Saxon run per rule
 * set; null when the rules are not available (the skip is reported).
 */
export function ruleFindings(documents: Map<string, Buffer>, ruleSets: readonly RuleSet[]): Finding[] | null {
  if (!peppolRulesPresent()) {
    if (process.env.PEPPOL_RULES_REQUIRED) throw new Error(`${MISSING} (PEPPOL_RULES_REQUIRED is set)`)
    if (skipped++ === 0) console.warn(`\n  ! ${MISSING}\n`)
    return null
  }
  const input = mkdtempSync(join(tmpdir(), 'qw-peppol-in-'))
  for (const [name, xml] of documents) writeFileSync(join(input, `${name}.xml`), xml)
  const out: Finding[] = []
  for (const ruleSet of ruleSets) {
    const output = mkdtempSync(join(tmpdir(), 'qw-peppol-out-'))
    saxon([`-s:${input}`, `-xsl:${compiled(ruleSet)}`, `-o:${output}`])
    for (const file of readdirSync(output)) {
      const svrl = readFileSync(join(output, file), 'utf8')
      for (const m of svrl.matchAll(/<svrl:failed-assert\b([^>]*)>([\s\S]*?)<\/svrl:failed-assert>/g)) {
        const attr = (name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(m[1]!)?.[1] ?? ''
        const text = /<svrl:text>([\s\S]*?)<\/svrl:text>/.exec(m[2]!)?.[1]?.trim() ?? ''
        out.push({ document: file.replace(/\.xml$/, ''), ruleSet, id: attr('id'), flag: attr('flag'), text })
      }
    }
  }
  return out
}

process.once('exit', () => {
  if (skipped > 0) console.warn(`  ! Peppol BIS rule checks skipped (${skipped}). ${MISSING}`)
})
