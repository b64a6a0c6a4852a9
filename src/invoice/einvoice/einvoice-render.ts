// E-invoice outputs: the request mapped to the EN 16931 model (einvoice-model.ts), checked against
// the business rules this service is responsible for (einvoice-rules.ts), then written by
// @e-invoice-eu/core: UBL (Peppol BIS Billing 3.0), XRechnung CII, or Factur-X (the CII XML
// embedded into the invoice PDF, made PDF/A-3b). Runs in the render threads.
import { FormatFactoryService, invoiceSchema, ValidationService, type EInvoiceFormat, type Invoice, type Logger } from '@e-invoice-eu/core'
import { XMLBuilder } from 'fast-xml-parser'
import { Ajv2019, type ValidateFunction } from 'ajv/dist/2019.js'
import { logger } from '../../platform/logger.ts'
import { buildEInvoice } from './einvoice-model.ts'
import { assertBusinessRules } from './einvoice-rules.ts'
import type { InvoiceRequest } from '../invoice-schema.ts'
import type { InvoiceFormat } from '../model/einvoice-schema.ts'

const LIB_FORMAT: Record<Exclude<InvoiceFormat, 'pdf'>, string> = {
  facturx: 'Factur-X-EN16931',
  xrechnung: 'XRECHNUNG-CII',
  ubl: 'UBL',
}

// The library reports through a logger: its chatter is dropped, and what it finds wrong with a
// model (which requests that passed our checks should never give) goes to the log before it throws.
const quiet: Logger = { log: () => undefined, warn: () => undefined, error: (m) => logger.error({ detail: m }, 'e-invoice library rejected a model') }

const factory = new FormatFactoryService()
const validation = new ValidationService(quiet)
const validators = new Map<string, ValidateFunction<Invoice>>()

/**
 * What InvoiceService.generate() does, with each format's JSON-schema validator compiled once
 * per thread instead of on every call (the compile of the library's large schema cost more than
 * the rest of an XML render).
 */
async function generate(invoice: Invoice, options: { format: string; lang: string; pdf?: { buffer: Uint8Array; filename: string; mimetype: string } }): Promise<string | Uint8Array> {
  const formatter: EInvoiceFormat = factory.createFormatService(options.format, quiet)
  const format = factory.normalizeFormat(options.format)
  let validate = validators.get(format)
  if (!validate) {
    const schema = structuredClone(invoiceSchema)
    formatter.patchSchema(schema as never)
    validate = new Ajv2019({ strict: true, allErrors: true, useDefaults: true }).compile<Invoice>(schema)
    validators.set(format, validate)
  }
  const checked = validation.validate('invoice data', validate, invoice)
  formatter.fillInvoiceDefaults(checked)
  return formatter.generate(checked, { ...options, format })
}

// CII requires ram:ApplicableHeaderTradeDelivery (it may be empty), but @e-invoice-eu/core 2.3
// writes it only when the invoice has delivery data, and the D16B schema then rejects the XML.
// Every CII output (XRechnung and the XML inside Factur-X) goes through the plain CII format's
// generate(), which the package does not export by name: it is patched on that format's prototype.
type Generate = (...args: unknown[]) => Promise<string | Uint8Array>
const ciiProto = Object.getPrototypeOf(new FormatFactoryService().createFormatService('CII', quiet)) as { generate: Generate }
const ciiGenerate = ciiProto.generate
ciiProto.generate = async function (this: unknown, ...args: unknown[]) {
  const xml = await ciiGenerate.apply(this, args)
  return typeof xml === 'string' ? withoutAmountCurrency(withSellerDescription(withTradeDelivery(xml), sellerLegalInfo(args[0]))) : xml
}

// The library writes a line allowance's or charge's amount with a currencyID, which the EN 16931
// CII rules forbid (CII-DT-031: in CII only the VAT total, BT-110, names its currency).
export function withoutAmountCurrency(xml: string): string {
  return xml.replace(/<ram:ActualAmount currencyID="[^"]*">/g, '<ram:ActualAmount>')
}

// The library maps BT-33 (seller additional legal information, UBL cbc:CompanyLegalForm) into CII
// from a key its own schema does not allow, so CII never gets it: it is written here as the
// seller's ram:Description, which D16B places right after ram:Name.
function sellerLegalInfo(invoice: unknown): string | undefined {
  const inv = (invoice as { 'ubl:Invoice'?: Record<string, any> })?.['ubl:Invoice']
  return inv?.['cac:AccountingSupplierParty']?.['cac:Party']?.['cac:PartyLegalEntity']?.['cbc:CompanyLegalForm']
}

export function withSellerDescription(xml: string, info: string | undefined): string {
  if (!info || /<ram:SellerTradeParty>(?:(?!<\/ram:SellerTradeParty>)[\s\S])*<ram:Description>/.test(xml)) return xml
  const escaped = info.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
  return xml.replace(/(<ram:SellerTradeParty>(?:(?!<\/ram:SellerTradeParty>)[\s\S])*?<ram:Name>[^<]*<\/ram:Name>)(\s*)/, `$1$2<ram:Description>${escaped}</ram:Description>$2`)
}

export function withTradeDelivery(xml: string): string {
  if (xml.includes('<ram:ApplicableHeaderTradeDelivery')) return xml
  return xml.replace(/(\s*)<ram:ApplicableHeaderTradeSettlement>/, '$1<ram:ApplicableHeaderTradeDelivery/>$1<ram:ApplicableHeaderTradeSettlement>')
}

// Factur-X XMP metadata: @e-invoice-eu/core 2.3.4 hands the XMP packet to pdf-lib as a JS string,
// and pdf-lib keeps the low byte of each UTF-16 unit, so "Söhne" is not UTF-8 and "丼evil丯举"
// (U+4E3C, U+4E2F, U+4E3E) turns into "<evil/>" inside the packet. The packet is given as the
// bytes of its UTF-8 encoding, one byte per character, which is what the low-byte cut writes out
// unchanged; the library's own BOM (the three bytes EF BB BF written as three characters) is made
// the one character U+FEFF first so that it is encoded once.
// Remove this patch when a release carries the upstream fix (gflohr/e-invoice-eu#435, PR #437, in
// its 3.0.0; the npm registry served 2.3.4 as the newest in November 2026):
// test/invoice-facturx-xmp.test.ts checks the library still cuts the bytes and fails once it no
// longer does (the patch would then encode twice).
type AddMetadata = (this: unknown, pdfDoc: unknown, xmp: string) => void
type AddRdf = (this: unknown, node: unknown, meta: { creator: string; subject: string }) => void
let fxProto = Object.getPrototypeOf(new FormatFactoryService().createFormatService('Factur-X-EN16931', quiet)) as { addMetadata?: AddMetadata; addRdf?: AddRdf }
while (!Object.prototype.hasOwnProperty.call(fxProto, 'addMetadata')) fxProto = Object.getPrototypeOf(fxProto)
/** The library's own addMetadata, kept for the test that notices when it is fixed upstream. */
export const libraryAddMetadata = fxProto.addMetadata!
fxProto.addMetadata = function (this: unknown, pdfDoc: unknown, xmp: string) {
  return libraryAddMetadata.call(this, pdfDoc, xmpBytesAsText(xmp))
}

// The packet is built with xmlbuilder2, whose text escaping leaves "&name;" and "&#n;" alone, so a
// seller called "A &amp; B" came out as "A & B" and "A &nbsp; B" as an undeclared entity (not
// well-formed). Its two texts from the invoice (the seller's name, the subject naming it) get every
// "&" as "&amp;" first, which xmlbuilder2 then keeps: each "&" is escaped exactly once. Upstream
// still does this (3.x too); the PDF's Info dictionary takes the texts unescaped, from elsewhere.
const libraryAddRdf = fxProto.addRdf!
fxProto.addRdf = function (this: unknown, node: unknown, meta: { creator: string; subject: string }) {
  const amp = (s: string) => s.replace(/&/g, '&amp;')
  return libraryAddRdf.call(this, node, { ...meta, creator: amp(meta.creator), subject: amp(meta.subject) })
}

/** The XMP packet's UTF-8 bytes, one character per byte. */
export function xmpBytesAsText(xmp: string): string {
  return Buffer.from(xmp.replace('begin="\u00EF\u00BB\u00BF"', 'begin="\uFEFF"'), 'utf8').toString('latin1')
}

// @e-invoice-eu/core maps the invoice onto a plain object (element names as keys, `@name` attributes,
// `#` text) and serialises it through xmlbuilder2's DOM, which builds a full W3C node tree and
// re-resolves the root's five namespaces over it: ~70 % of an XML render. fast-xml-parser's
// builder writes the same object straight to text (same elements, attributes, order and tab
// indentation; quotes in text come out as &quot;/&apos;, equivalent XML: the tests compare the
// canonical forms of both). Everything else of the library — the mapping, its defaults, the
// Factur-X PDF/A-3 embedding — is unchanged.
type XmlData = Record<string, unknown>
const xmlBuilder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', textNodeName: '#', format: true, indentBy: '\t', suppressEmptyNode: true })
let xmlProto = Object.getPrototypeOf(ciiProto) as { renderXML?: (data: XmlData) => string; cleanAttributes(data: XmlData): void }
while (!Object.prototype.hasOwnProperty.call(xmlProto, 'renderXML')) xmlProto = Object.getPrototypeOf(xmlProto)
/** The library's own serialiser (xmlbuilder2), kept for the tests that compare the two. */
export const libraryRenderXML = xmlProto.renderXML!
xmlProto.renderXML = function (this: typeof xmlProto, data: XmlData): string {
  this.cleanAttributes(data)
  return `<?xml version="1.0" encoding="utf-8"?>\n${(xmlBuilder.build(inlineTextGroups(data)) as string).trimEnd()}`
}

/**
 * xmlbuilder2 reads a `#` key holding an object as that object's keys written in place (the
 * library uses it for an amount with a currency attribute); the builder wants them inline.
 */
function inlineTextGroups(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inlineTextGroups)
  if (value === null || typeof value !== 'object') return value
  const out: XmlData = {}
  for (const [k, v] of Object.entries(value as XmlData)) {
    if (k === '#' && v !== null && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, inlineTextGroups(v))
    else out[k] = inlineTextGroups(v)
  }
  return out
}

const LANG: Record<string, string> = { en: 'en-us', de: 'de-de', fr: 'fr-fr', es: 'es-es', it: 'it-it', nl: 'nl-nl', 'pt-BR': 'pt-br', ja: 'ja-jp', 'zh-CN': 'zh-cn' }

/** The e-invoice bytes: XML for ubl/xrechnung, the PDF/A-3b for facturx (`pdf` is its visible part). */
export async function renderEInvoice(req: InvoiceRequest, opts: { today: string; pdf?: Buffer }): Promise<Buffer> {
  const format = req.format as Exclude<InvoiceFormat, 'pdf'>
  const { invoice, totals } = buildEInvoice(req, opts.today)
  assertBusinessRules(invoice, totals)
  const out = await generate(invoice, {
    format: LIB_FORMAT[format],
    lang: LANG[req.locale ?? 'en'] ?? 'en-us',
    ...(opts.pdf ? { pdf: { buffer: opts.pdf, filename: 'invoice.pdf', mimetype: 'application/pdf' } } : {}),
  })
  return typeof out === 'string' ? Buffer.from(out, 'utf8') : Buffer.from(out.buffer, out.byteOffset, out.byteLength)
}
