// The CII XML embedded in a received Factur-X / ZUGFeRD PDF, found among the PDF's embedded files
// with @cantoo/pdf-lib's parser. Everything inflated on the way (object streams, cross-reference
// streams, the XML) shares one InflateBudget, so a compressed-stream bomb stops at the budget.
import { PDFContext, PDFDict, PDFHexString, PDFName, PDFRawStream, PDFString } from '@cantoo/pdf-lib'
import { HttpError, badRequest, payloadTooLarge } from '../../platform/http/errors.ts'
import { CappedPdfParser } from './capped-pdf-parser.ts'
import { InflateBudget } from './inflate-budget.ts'
import type { ReadDeadline } from './read-deadline.ts'

/** An e-invoice XML of 1,000 generous lines stays well below this. */
export const MAX_XML_BYTES = 8 * 1024 * 1024

/** The names the Factur-X, ZUGFeRD and XRechnung-in-PDF conventions give the invoice XML, in the
 *  order they are read: a PDF carrying factur-x.xml and the legacy ZUGFeRD-invoice.xml (ZUGFeRD 2
 *  writers add both) is read from factur-x.xml. */
const INVOICE_NAMES = ['factur-x.xml', 'zugferd-invoice.xml', 'xrechnung.xml', 'order-x.xml']

const nameOf = (spec: PDFDict): string => {
  const n = spec.lookup(PDFName.of('UF')) ?? spec.lookup(PDFName.of('F'))
  return n instanceof PDFString || n instanceof PDFHexString ? n.decodeText() : ''
}

export async function extractInvoiceXml(pdfBytes: Buffer, budget = new InflateBudget(), deadline?: ReadDeadline): Promise<{ xml: string; name: string }> {
  if (!pdfBytes.subarray(0, 1024).includes('%PDF-')) throw badRequest('Body is not a PDF: it does not start with %PDF-')
  const parser = new CappedPdfParser(pdfBytes, budget, deadline)
  let context: PDFContext
  try {
    context = await parser.parseDocument()
  } catch {
    if (parser.refusal instanceof HttpError) throw parser.refusal
    throw badRequest('Body is not a readable PDF')
  }
  // pdf-lib reads leniently: a file of which it could make no object is no PDF.
  if (context.enumerateIndirectObjects().length === 0) throw badRequest('Body is not a readable PDF')
  const files: { name: string; stream: PDFRawStream }[] = []
  for (const [, obj] of context.enumerateIndirectObjects()) {
    if (!(obj instanceof PDFDict) || obj.lookup(PDFName.of('Type')) !== PDFName.of('Filespec')) continue
    const ef = obj.lookup(PDFName.of('EF'))
    if (!(ef instanceof PDFDict)) continue
    const stream = ef.lookup(PDFName.of('UF')) ?? ef.lookup(PDFName.of('F'))
    if (stream instanceof PDFRawStream) files.push({ name: nameOf(obj), stream })
  }
  const xml = files.filter((f) => f.name.toLowerCase().endsWith('.xml'))
  if (files.length === 0) throw badRequest('The PDF has no embedded files: a Factur-X / ZUGFeRD PDF carries its invoice as factur-x.xml')
  const known = INVOICE_NAMES.map((n) => files.filter((f) => f.name.toLowerCase() === n)).find((same) => same.length > 0)
  // Two files of the same known name, or no known name and several XMLs: which one is meant is unclear.
  if ((known && known.length > 1) || (!known && xml.length > 1)) {
    throw badRequest(`The PDF embeds several invoice XML files (${(known ?? xml).map((f) => f.name).join(', ')}): send the one to read as XML`)
  }
  const chosen = known?.[0] ?? xml[0]
  if (!chosen) throw badRequest(`The PDF embeds no invoice XML (files: ${files.map((f) => f.name).join(', ')})`)
  const bytes = budget.decode(chosen.stream, `embedded file ${chosen.name}`, MAX_XML_BYTES)
  if (bytes.length > MAX_XML_BYTES) throw payloadTooLarge(`The PDF's embedded file ${chosen.name} inflates to more than ${MAX_XML_BYTES} bytes`)
  return { xml: bytes.toString('utf8'), name: chosen.name }
}
