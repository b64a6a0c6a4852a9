// Parsing a received e-invoice's XML without trusting it (docs/einvoice.md, "Receiving
// e-invoices"): a document with a DTD is refused before parsing, so no entity is ever declared,
// expanded or fetched (XXE, billion laughs); nesting deeper than any EN 16931 syntax needs is
// refused; fast-xml-parser then reads it with entity processing off.
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { badRequest } from '../../../platform/http/errors.ts'

/** CII nests about 8 levels, UBL about 6: 64 leaves room for extensions and stops stack abuse. */
export const MAX_XML_DEPTH = 64

/** An e-invoice's longest start tag (namespace declarations included) is well under 4 KB. */
export const MAX_TAG_CHARS = 64 * 1024

type Json = Record<string, any>

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  trimValues: true,
})

/** The document's root element name and content, namespace prefixes removed, every value a string. */
export function parseXml(text: string): { root: string; doc: Json } {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw badRequest('XML with a DTD or entity declarations is not accepted: e-invoices never carry one')
  checkDepth(text)
  const valid = XMLValidator.validate(text)
  if (valid !== true) throw badRequest(`Body is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`)
  const parsed = parser.parse(text) as Json
  const root = Object.keys(parsed).find((k) => k !== '?xml')
  if (!root) throw badRequest('Body is not an XML document')
  return { root, doc: parsed[root] as Json }
}

/** Refused before any tree is built: counts open and closed elements in one pass, and refuses a
 *  giant tag (hundreds of thousands of attributes take the parser seconds). */
function checkDepth(text: string): void {
  let depth = 0
  for (const m of text.matchAll(/<(\/?)[A-Za-z_][^<>]*?(\/?)>/g)) {
    if (m[0].length > MAX_TAG_CHARS) throw badRequest(`An XML tag is longer than ${MAX_TAG_CHARS} characters`)
    if (m[1]) depth--
    else if (!m[2]) depth++
    if (depth > MAX_XML_DEPTH) throw badRequest(`XML is nested deeper than ${MAX_XML_DEPTH} elements`)
  }
}

/** The values of a path through the tree, arrays flattened ("a/b/c"). */
export function all(node: unknown, path: string): any[] {
  let cur: any[] = [node]
  for (const step of path.split('/')) {
    const next: any[] = []
    for (const n of cur) {
      const v = n && typeof n === 'object' ? (n as Json)[step] : undefined
      if (Array.isArray(v)) next.push(...v)
      else if (v !== undefined) next.push(v)
    }
    cur = next
  }
  return cur
}

/** The text of the first value at a path ("#text" of an element with attributes). */
export function text(node: unknown, path: string): string | undefined {
  const v = all(node, path)[0]
  if (v === undefined || v === null) return undefined
  const t = typeof v === 'object' ? (v as Json)['#text'] : v
  return t === undefined || t === '' ? undefined : String(t)
}

/** An attribute of the first value at a path. */
export function attr(node: unknown, path: string, name: string): string | undefined {
  const v = all(node, path)[0]
  return v && typeof v === 'object' ? (v as Json)[`@${name}`] : undefined
}
