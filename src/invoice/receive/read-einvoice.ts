// Reading a received e-invoice (docs/einvoice-receiving.md): XML (UBL or CII) or a
// Factur-X / ZUGFeRD PDF, into what it states, the request it reads into, the findings of the rules
// it declares, and apart from them what this service would need to write it again (read-result.ts).
import { badRequest } from '../../platform/http/errors.ts'
import { advisoryFindings } from './advisory-checks.ts'
import { xsdFindings } from './checks.ts'
import { declaredFindings, profileOf } from './declared-rules.ts'
import { en16931Findings } from './en16931-rules.ts'
import { extractInvoiceXml } from './extract-facturx.ts'
import { InflateBudget } from './inflate-budget.ts'
import { parseCii } from './parse-cii.ts'
import { parseUbl } from './parse-ubl.ts'
import type { Finding, ReadResult } from './read-result.ts'
import type { ReceivedInvoice } from './received.ts'
import { ReadDeadline } from './read-deadline.ts'
import { resendNeeds } from './resend.ts'
import { parseXml } from './safe-xml.ts'

export type { ReadResult } from './read-result.ts'

/** A finding's message as one clean line: no control characters, no runs of blanks. */
const cleanMessage = (f: Finding): Finding => ({ ...f, message: f.message.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim() })

export async function readEInvoice(body: Buffer, kind: 'xml' | 'pdf', deadline = new ReadDeadline()): Promise<ReadResult> {
  if (body.length === 0) throw badRequest('Request body is empty: send the e-invoice XML or PDF')
  const embedded = kind === 'pdf' ? await extractInvoiceXml(body, new InflateBudget(), deadline) : undefined
  const xml = embedded?.xml ?? body.toString('utf8')
  deadline.check('before parsing the XML')
  const { root, doc } = parseXml(xml)
  let received: ReceivedInvoice
  let schema: 'cii' | 'Invoice' | 'CreditNote'
  if (root === 'Invoice' || root === 'CreditNote') {
    received = parseUbl(doc, root)
    schema = root
  } else if (root === 'CrossIndustryInvoice') {
    received = parseCii(doc)
    schema = 'cii'
  } else {
    throw badRequest(`Not an e-invoice: the root element is ${root}, expected a UBL Invoice or CreditNote or a CII CrossIndustryInvoice`)
  }
  const { profile, known } = profileOf(received.profileId, received.processId, kind === 'pdf')
  if (received.stated.lines.length === 0) {
    const why = profile.rules === 'factur-x-minimum' || profile.rules === 'factur-x-basic-wl' ? ` (its profile ${profile.id} carries none: it is no EN 16931 invoice, only the PDF is the invoice)` : ''
    throw badRequest(`Not an e-invoice: the document has no invoice lines${why}`)
  }
  const source = kind === 'pdf' ? 'facturx' : received.syntax
  // The format a reply to /invoice writes again: the one the document came in (CII XML as XRechnung).
  received.request.format = source === 'cii' ? 'xrechnung' : source
  deadline.check('before the checks')
  const ruleInput = { syntax: received.syntax, stated: received.stated, facts: received.facts, request: received.request, profileId: received.profileId, processId: received.processId }
  const findings: Finding[] = [
    ...(await xsdFindings(xml, schema, deadline.left())),
    ...(known || received.profileId === undefined
      ? []
      : [{ rule: 'BT-24', severity: 'info' as const, bt: 'BT-24', stated: received.profileId, message: `The specification identifier (BT-24) ${received.profileId} names no rule set this service knows: the document is judged by the EN 16931 core rules only` }]),
    ...en16931Findings(ruleInput),
    ...declaredFindings(profile.rules, ruleInput),
    ...advisoryFindings(received.stated, received.facts, received.facts.sellerLegalScheme),
  ].map(cleanMessage)
  return {
    source,
    ...(embedded ? { attachment: embedded.name } : {}),
    profile,
    invoice: received.request,
    stated: received.stated,
    findings,
    resend: resendNeeds(received.request, received.stated),
  }
}
