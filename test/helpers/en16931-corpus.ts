// The vendored e-invoices other software wrote (test/fixtures/einvoice-received, README there): each
// as the body to send to POST /einvoice/read and as the XML the official rules and the independent
// reader of en16931-stated.ts look at — for a Factur-X / ZUGFeRD PDF its invoice attachment, taken
// out with qpdf (not with the service's PDF code).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { FIXTURES } from './en16931-rules.ts'

export interface CorpusDocument {
  /** Path below the fixtures folder: "cen/ubl/guide-example1.xml", "facturx/akretion/invoice_EN16931.pdf". */
  name: string
  body: Buffer
  contentType: 'application/xml' | 'application/pdf'
  /** The invoice XML (the body itself, or the PDF's attachment). */
  xml: Buffer
  /** For a PDF: the attachment's name. */
  attachment?: string
}

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f)
    return statSync(p).isDirectory() ? files(p) : [p]
  })

/** The invoice attachment names, in the order a reader looks for them (Factur-X 1.0, ZUGFeRD 2.x / 1.0, XRechnung). */
const ATTACHMENTS = ['factur-x.xml', 'zugferd-invoice.xml', 'ZUGFeRD-invoice.xml', 'xrechnung.xml']

function attachmentOf(pdf: string): { name: string; xml: Buffer } {
  const listed = execFileSync('qpdf', ['--list-attachments', pdf], { encoding: 'utf8' })
  const keys = [...listed.matchAll(/^(\S.*?) -> /gm)].map((m) => m[1]!)
  const name = ATTACHMENTS.find((a) => keys.includes(a))
  if (!name) throw new Error(`${pdf}: no invoice attachment among ${keys.join(', ')}`)
  return { name, xml: execFileSync('qpdf', [`--show-attachment=${name}`, pdf], { maxBuffer: 16 << 20 }) }
}

let cached: CorpusDocument[] | undefined

/** Every vendored document (not the rules, licences or READMEs), sorted by name. */
export function corpus(): CorpusDocument[] {
  cached ??= files(FIXTURES)
    .filter((p) => /\.(xml|pdf)$/i.test(p) && !p.includes('/rules/'))
    .sort()
    .map((p) => {
      const name = relative(FIXTURES, p)
      const body = readFileSync(p)
      if (/\.pdf$/i.test(p)) {
        const a = attachmentOf(p)
        return { name, body, contentType: 'application/pdf' as const, xml: a.xml, attachment: a.name }
      }
      return { name, body, contentType: 'application/xml' as const, xml: body }
    })
  return cached
}
