// Changing one thing in an e-invoice's XML text and nothing else (every other byte as the sender
// wrote it), to make a copy that breaks one rule: an element found by a path of tag names from the
// document's start, each step the first (or the first whose content matches) inside the previous.
// The tags the tests step through never nest in themselves (cac:TaxSubtotal, ram:ApplicableTradeTax,
// cac:InvoiceLine …), which is what lets plain text search stand in for a parser here.
import { plus } from './en16931-amounts.ts'

export type Step = string | { tag: string; where: RegExp }

interface Range {
  /** Start of the start tag, start and end of the content, end of the end tag. */
  start: number
  open: number
  close: number
  end: number
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

function find(xml: string, step: Step, within: Range): Range {
  const tag = typeof step === 'string' ? step : step.tag
  const opening = new RegExp(`<${escape(tag)}(?:\\s[^>]*)?>`, 'g')
  opening.lastIndex = within.open
  for (let m = opening.exec(xml); m && m.index < within.close; m = opening.exec(xml)) {
    const open = m.index + m[0].length
    const close = xml.indexOf(`</${tag}>`, open)
    if (close < 0 || close > within.close) throw new Error(`<${tag}> at ${m.index} is not closed inside its parent`)
    if (typeof step === 'string' || step.where.test(xml.slice(open, close))) return { start: m.index, open, close, end: close + tag.length + 3 }
  }
  throw new Error(`no <${tag}>${typeof step === 'string' ? '' : ` matching ${step.where}`} in ${xml.slice(within.start, within.start + 80)}…`)
}

function locate(xml: string, path: Step[]): Range {
  let r: Range = { start: 0, open: 0, close: xml.length, end: xml.length }
  for (const step of path) r = find(xml, step, r)
  return r
}

/** The element's content (as written, blanks included). */
export const contentAt = (xml: string, path: Step[]): string => {
  const r = locate(xml, path)
  return xml.slice(r.open, r.close)
}

/** The element's content replaced by what `change` makes of it. */
export function editContent(xml: string, path: Step[], change: (content: string) => string): string {
  const r = locate(xml, path)
  return xml.slice(0, r.open) + change(xml.slice(r.open, r.close)) + xml.slice(r.close)
}

/** The amount at the path plus delta ("1.00", "-10.00"), in the amount's own number of decimals. */
export const addTo = (xml: string, path: Step[], delta: string) => editContent(xml, path, (c) => plus(c.trim(), delta))

/** The element at the path removed (with the line it stood on when it was alone there). */
export function remove(xml: string, path: Step[]): string {
  const r = locate(xml, path)
  const lineStart = xml.lastIndexOf('\n', r.start - 1)
  const alone = /^\s*$/.test(xml.slice(lineStart + 1, r.start)) && /^[ \t]*\r?\n/.test(xml.slice(r.end))
  return alone ? xml.slice(0, lineStart) + xml.slice(r.end).replace(/^[ \t]*(?=\r?\n)/, '') : xml.slice(0, r.start) + xml.slice(r.end)
}
