// Reading a received e-invoice (docs/einvoice.md, "Receiving e-invoices"): XML (UBL or CII) or a
// Factur-X / ZUGFeRD PDF, into this service's invoice request plus the findings of the checks.
import { badRequest } from '../../../platform/http/errors.ts'
import { ruleFindings, xsdFindings, type Finding } from './checks.ts'
import { extractInvoiceXml } from './extract-facturx.ts'
import { InflateBudget } from './inflate-budget.ts'
import { parseCii } from './parse-cii.ts'
import { parseUbl } from './parse-ubl.ts'
import type { ReceivedInvoice } from './received.ts'
import { ReadDeadline } from './read-deadline.ts'
import { parseXml } from './safe-xml.ts'

export interface ReadResult {
  /** ubl, cii, or facturx (CII inside a PDF). */
  source: 'ubl' | 'cii' | 'facturx'
  invoice: Record<string, any>
  findings: Finding[]
}

export async function readEInvoice(body: Buffer, kind: 'xml' | 'pdf', deadline = new ReadDeadline()): Promise<ReadResult> {
  if (body.length === 0) throw badRequest('Request body is empty: send the e-invoice XML or PDF')
  const xml = kind === 'pdf' ? await extractInvoiceXml(body, new InflateBudget(), deadline) : body.toString('utf8')
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
  if (!Array.isArray(received.request.items) || received.request.items.length === 0) throw badRequest('Not an e-invoice: the document has no invoice lines')
  const source = kind === 'pdf' ? 'facturx' : received.syntax
  // The format a reply to /invoice writes again: the one the document came in (CII XML as XRechnung).
  received.request.format = source === 'cii' ? 'xrechnung' : source
  deadline.check('before the checks')
  const findings = [...(await xsdFindings(xml, schema, deadline.left())), ...ruleFindings(received)]
  return { source, invoice: received.request, findings }
}
