// The official EN 16931 validation rules of CEN/TC 434 for UBL and CII — the Schematron compiled
// to XSLT by CEN itself, vendored in test/fixtures/einvoice-received/cen/rules (README there:
// source, version, licence) — run with Saxon-HE over a batch of documents, so a test can ask what
// the official validator says about a document it then sends to the service. One JVM per syntax
// per call: start-up and compiling the 0.7–0.9 MB stylesheet take a second or two, each further
// document milliseconds, so callers gather their documents first. Java and Saxon-HE (Debian's
// default-jre-headless and libsaxonhe-java, installed by .ci/run) are required, not optional:
// the rules are in the repository, so a missing runtime is a broken machine, not a skip.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)
export const FIXTURES = fileURLToPath(new URL('../fixtures/einvoice-received/', import.meta.url))
const RULES = {
  ubl: join(FIXTURES, 'cen/rules/EN16931-UBL-validation.xslt'),
  cii: join(FIXTURES, 'cen/rules/EN16931-CII-validation.xslt'),
}
export const SAXON = process.env.SAXON_JAR ?? '/usr/share/java/Saxon-HE.jar'

export type Syntax = 'ubl' | 'cii'

export interface RuleFinding {
  /** The name the document was given by the caller. */
  document: string
  /** BR-CO-10, BR-S-08, UBL-CR-646 … */
  id: string
  /** fatal | warning | information, as the rule declares it. */
  flag: string
  text: string
  /** The XPath of the node the rule failed on. */
  location: string
}

/** UBL or CII by the root element (the rules are per syntax). */
export function syntaxOf(xml: Buffer | string): Syntax {
  // The root is the first tag after the prolog (declarations, comments: one vendor puts a long
  // disclaimer there).
  const text = typeof xml === 'string' ? xml : xml.toString('utf8')
  const root = /<(?![?!])([\w.-]+:)?([\w.-]+)/.exec(text.replace(/<!--[\s\S]*?-->/g, ''))?.[2]
  return root === 'CrossIndustryInvoice' ? 'cii' : 'ubl'
}

/** Saxon-HE's Transform on a folder: one output file per input, same names. */
export async function saxonFolder(xsl: string, input: string, output: string, params: string[] = []): Promise<void> {
  if (!existsSync(SAXON)) throw new Error(`Saxon-HE is not at ${SAXON}: install libsaxonhe-java and default-jre-headless (as .ci/run does) or set SAXON_JAR`)
  mkdirSync(output, { recursive: true })
  await run('java', ['-Xss8m', '-cp', SAXON, 'net.sf.saxon.Transform', `-s:${input}`, `-xsl:${xsl}`, `-o:${output}`, ...params], { maxBuffer: 64 << 20 })
}

/** A flat file name for a document name that may hold slashes. */
export const fileName = (document: string) => `${document.replace(/[^\w.-]+/g, '_')}.xml`

/** Writes the documents into a fresh folder; returns it and the file name → document name map. */
export function writeBatch(documents: Map<string, Buffer | string>, prefix: string): { dir: string; names: Map<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const names = new Map<string, string>()
  for (const [name, xml] of documents) {
    const file = fileName(name)
    if (names.has(file)) throw new Error(`two documents would share the file name ${file}: ${names.get(file)}, ${name}`)
    names.set(file, name)
    writeFileSync(join(dir, file), xml)
  }
  return { dir, names }
}

const unescape = (s: string) =>
  s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&')

/** The failed assertions of one SVRL report. */
export function parseSvrl(svrl: string, document: string): RuleFinding[] {
  const out: RuleFinding[] = []
  for (const m of svrl.matchAll(/<svrl:failed-assert\b([^>]*)>([\s\S]*?)<\/svrl:failed-assert>/g)) {
    const attr = (name: string) => unescape(new RegExp(`\\s${name}="([^"]*)"`).exec(m[1]!)?.[1] ?? '')
    const text = unescape(/<svrl:text>([\s\S]*?)<\/svrl:text>/.exec(m[2]!)?.[1]?.replace(/\s+/g, ' ').trim() ?? '')
    out.push({ document, id: attr('id'), flag: attr('flag'), text, location: attr('location') })
  }
  return out
}

/**
 * The official rules' failed assertions for every document (name → XML), each syntax's documents
 * in one Saxon run. Every document gets an entry (empty: the rules passed it); a document the
 * rules produced no report for throws, so "no findings" never means "not checked".
 */
export async function en16931Findings(documents: Map<string, Buffer | string>): Promise<Map<string, RuleFinding[]>> {
  const bySyntax: Record<Syntax, Map<string, Buffer | string>> = { ubl: new Map(), cii: new Map() }
  for (const [name, xml] of documents) bySyntax[syntaxOf(xml)].set(name, xml)
  const out = new Map<string, RuleFinding[]>()
  await Promise.all(
    (['ubl', 'cii'] as const).map(async (syntax) => {
      if (bySyntax[syntax].size === 0) return
      const { dir, names } = writeBatch(bySyntax[syntax], `qw-en16931-${syntax}-`)
      const output = `${dir}-svrl`
      try {
        await saxonFolder(RULES[syntax], dir, output)
        const reports = new Set(readdirSync(output))
        for (const [file, name] of names) {
          if (!reports.has(file)) throw new Error(`the EN 16931 ${syntax} rules wrote no report for ${name}`)
          out.set(name, parseSvrl(readFileSync(join(output, file), 'utf8'), name))
        }
      } finally {
        rmSync(dir, { recursive: true, force: true })
        rmSync(output, { recursive: true, force: true })
      }
    }),
  )
  return out
}

/** The fatal findings only: what makes the official validator reject a document. */
export const fatal = (findings: RuleFinding[]) => findings.filter((f) => f.flag === 'fatal')
