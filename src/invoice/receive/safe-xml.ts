// Parsing a received e-invoice's XML without trusting it (docs/einvoice-receiving.md): a document with a DTD is refused before parsing, so no entity is ever declared,
// expanded or fetched (XXE, billion laughs); nesting deeper than any EN 16931 syntax needs is
// refused; a reference to any entity but the five XML predefines (no DTD declares one) is not
// well-formed and refused; fast-xml-parser then reads it with entity processing off, and the five
// predefined entities and character references are decoded here, in text and attribute values.
import { XMLParser, XMLValidator } from 'fast-xml-parser'
import { badRequest } from '../../platform/http/errors.ts'

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
  // Not trimmed by the parser: a text's own leading or trailing line break (an XRechnung Skonto
  // term ends with one, BR-DE-18) is kept; text() trims, rawText() does not.
  trimValues: false,
  tagValueProcessor: (_name: string, value: string) => decodeReferences(value),
  attributeValueProcessor: (_name: string, value: string) => decodeReferences(value),
})

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** A code point XML 1.0 allows in a document (its production Char). */
const isXmlChar = (c: number) => c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff)

/** &amp; &lt; &gt; &quot; &apos; and &#…; / &#x…; decoded (checkReferences has refused any other). */
function decodeReferences(value: string): string {
  if (!value.includes('&')) return value
  return value.replace(/&(#x[0-9A-Fa-f]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_m, ref: string) =>
    ref.startsWith('#x') ? String.fromCodePoint(parseInt(ref.slice(2), 16)) : ref.startsWith('#') ? String.fromCodePoint(Number(ref.slice(1))) : PREDEFINED[ref]!,
  )
}

/** The document's root element name and content, namespace prefixes removed, every value a string. */
export function parseXml(text: string): { root: string; doc: Json } {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw badRequest('XML with a DTD or entity declarations is not accepted: e-invoices never carry one')
  checkDepth(text)
  checkReferences(text)
  const valid = XMLValidator.validate(text)
  if (valid !== true) throw badRequest(`Body is not well-formed XML: ${printable(valid.err.msg)} (line ${valid.err.line})`)
  let parsed: Json
  try {
    parsed = parser.parse(text) as Json
  } catch (err) {
    // fast-xml-parser refuses names such as __proto__, constructor, prototype (they would reach
    // an object's prototype): the client's document, so a 400 naming what was refused.
    const msg = printable(String((err as Error)?.message ?? err)).replace(/^\[SECURITY\]\s*/, '')
    throw badRequest(`The XML could not be read: ${msg}`)
  }
  const root = Object.keys(parsed).find((k) => k !== '?xml')
  if (!root) throw badRequest('Body is not an XML document')
  return { root, doc: parsed[root] as Json }
}

/** A message of the parser's without control characters (they would reach the client's JSON). */
const printable = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim().slice(0, 300)

/** Refused before any tree is built: counts open and closed elements in one pass, whatever their
 *  names (`<é>`, `<:a>`, `<丼>` nest as deep as `<a>`), and refuses a giant tag (hundreds of
 *  thousands of attributes take the parser seconds). Comments, CDATA, PIs and declarations are
 *  skipped whole. */
function checkDepth(text: string): void {
  let depth = 0
  let i = text.indexOf('<')
  while (i !== -1) {
    const next = text.charCodeAt(i + 1)
    let end: number
    if (next === 0x21 /* ! */) {
      const close = text.startsWith('<!--', i) ? '-->' : text.startsWith('<![CDATA[', i) ? ']]>' : '>'
      end = text.indexOf(close, i + 2)
      if (end === -1) return // unterminated: the validator says so
      i = text.indexOf('<', end + close.length)
      continue
    }
    if (next === 0x3f /* ? */) {
      end = text.indexOf('?>', i + 2)
      if (end === -1) return
      i = text.indexOf('<', end + 2)
      continue
    }
    end = text.indexOf('>', i + 1)
    if (end === -1) return
    if (end - i + 1 > MAX_TAG_CHARS) throw badRequest(`An XML tag is longer than ${MAX_TAG_CHARS} characters`)
    if (next === 0x2f /* / */) depth--
    else if (text.charCodeAt(end - 1) !== 0x2f) depth++
    if (depth > MAX_XML_DEPTH) throw badRequest(`XML is nested deeper than ${MAX_XML_DEPTH} elements`)
    i = text.indexOf('<', end + 1)
  }
}

/** Every & outside comments and CDATA must start one of the five predefined entities or a
 *  character reference to a character XML allows: anything else (`&xxe;` with no DTD to declare
 *  it, a bare `&`, `&#0;`) makes the document not well-formed. */
function checkReferences(text: string): void {
  const body = text.replace(/<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>/g, '')
  for (const m of body.matchAll(/&([^;&<>\s]{0,40})(;?)/g)) {
    const ref = m[1]!
    const ok =
      m[2] === ';' &&
      (ref in PREDEFINED
        ? Object.hasOwn(PREDEFINED, ref)
        : /^#x[0-9A-Fa-f]{1,6}$/.test(ref)
          ? isXmlChar(parseInt(ref.slice(2), 16))
          : /^#[0-9]{1,7}$/.test(ref) && isXmlChar(Number(ref.slice(1))))
    if (!ok) {
      const shown = printable(m[0]).slice(0, 40)
      throw badRequest(
        /^[A-Za-z_]/.test(ref) && m[2] === ';'
          ? `Body is not well-formed XML: the entity ${shown} is not declared (only &amp; &lt; &gt; &quot; &apos; and character references exist without a DTD, and DTDs are not accepted)`
          : `Body is not well-formed XML: "${shown}" is not an entity or character reference XML allows`,
      )
    }
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

/** The text of the first value at a path ("#text" of an element with attributes), trimmed. */
export function text(node: unknown, path: string): string | undefined {
  const t = rawText(node, path)?.trim()
  return t === undefined || t === '' ? undefined : t
}

/** The text as written, leading and trailing white space kept (BT-20's final line break). */
export function rawText(node: unknown, path: string): string | undefined {
  const v = all(node, path)[0]
  if (v === undefined || v === null) return undefined
  const t = typeof v === 'object' ? (v as Json)['#text'] : v
  return t === undefined || t === '' ? undefined : String(t)
}

/** The text of a value itself (an element from all()), trimmed. */
export const valueText = (v: unknown): string | undefined => text({ v }, 'v')

/** An attribute of the first value at a path. */
export function attr(node: unknown, path: string, name: string): string | undefined {
  const v = all(node, path)[0]
  const a = v && typeof v === 'object' ? (v as Json)[`@${name}`] : undefined
  return typeof a === 'string' ? a.trim() || undefined : undefined
}
