// Text an e-invoice XML can carry. XML 1.0 (§2.2) has no way to write most C0 controls, lone
// surrogates or U+FFFE/U+FFFF — not even as character references — so a request holding one in a
// field that goes into the XML is refused with the field, its business term and the character,
// before anything is written (docs/einvoice.md, "Text in e-invoices"). Line breaks are legal and
// are written as LF only: an XML reader turns CR and CRLF into LF anyway, so the receiver reads
// exactly what was written.

/** Every request field the e-invoice XML carries, with its EN 16931 business term. */
const PARTY_TERMS = {
  from: { name: 'BT-27', street: 'BT-35', additional_street: 'BT-36', city: 'BT-37', postal_code: 'BT-38', country: 'BT-40', legal_id: 'BT-30', vat_id: 'BT-31', tax_number: 'BT-32', peppol_id: 'BT-34', email: 'BT-43', contact: 'BT-41', phone: 'BT-42' },
  to: { name: 'BT-44', street: 'BT-50', additional_street: 'BT-51', city: 'BT-52', postal_code: 'BT-53', country: 'BT-55', legal_id: 'BT-47', vat_id: 'BT-48', peppol_id: 'BT-49', email: 'BT-49' },
} as const
const INVOICE_TERMS = {
  invoice_number: 'BT-1',
  notes: 'BT-22',
  buyer_reference: 'BT-10',
  order_reference: 'BT-13',
  preceding_invoice_number: 'BT-25',
  tax_exemption_reason: 'BT-120',
} as const
const PAYMENT_TERMS = { account_name: 'BT-85', reference: 'BT-83', terms: 'BT-20' } as const
const ITEM_TERMS = { description: 'BT-153' } as const

/**
 * What XML 1.0 cannot carry (C0 controls but tab, LF, CR; lone surrogates; U+FFFE/U+FFFF) and
 * what it discourages (§2.2: DEL and the C1 controls, the noncharacters U+FDD0–U+FDEF and the last
 * two code points of every plane). The discouraged ones are well-formed, but no invoice text needs
 * them: a C1 control is nearly always Windows-1252 text read as Latin-1 (U+0080 for €), which the
 * receiver would print as nothing.
 */
const UNWRITABLE =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFDD0-\uFDEF\uFFFE\uFFFF]|[\uD83F\uD87F\uD8BF\uD8FF\uD93F\uD97F\uD9BF\uD9FF\uDA3F\uDA7F\uDABF\uDAFF\uDB3F\uDB7F\uDBBF\uDBFF][\uDFFE\uDFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

type Text = Record<string, unknown> | undefined

/** "U+0001" for a code point, "U+D800 (a lone surrogate)" for half a pair. */
function describe(ch: string): string {
  const cp = ch.codePointAt(0)!
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`
  return cp >= 0xd800 && cp <= 0xdfff ? `${hex} (a lone surrogate)` : hex
}

/** The first character of `value` an e-invoice cannot carry, as "U+0001 at position 3", or null. */
export function unwritable(value: string): string | null {
  const m = UNWRITABLE.exec(value)
  if (!m) return null
  // Position in characters as a user counts them (code points), from 1.
  return `${describe(m[0])} at character ${[...value.slice(0, m.index)].length + 1}`
}

/** One message per field that holds a character the XML cannot carry. */
export function xmlTextProblems(req: { items?: Text[]; from?: Text; to?: Text; payment?: Text } & Record<string, unknown>, why: string): string[] {
  const out: string[] = []
  const check = (value: unknown, field: string, bt: string) => {
    if (typeof value !== 'string') return
    const found = unwritable(value)
    if (found) out.push(`${field} (${bt}) holds ${found}, which an e-invoice cannot carry (XML 1.0) ${why}`)
  }
  for (const [k, bt] of Object.entries(INVOICE_TERMS)) check(req[k], k, bt)
  for (const [party, terms] of Object.entries(PARTY_TERMS)) {
    for (const [k, bt] of Object.entries(terms)) check((req[party] as Text)?.[k], `${party}.${k}`, bt)
  }
  for (const [k, bt] of Object.entries(PAYMENT_TERMS)) check(req.payment?.[k], `payment.${k}`, bt)
  const register = (req.from as { register?: Record<string, unknown> } | undefined)?.register
  check(register?.number, 'from.register.number', 'BT-30')
  check(register?.court, 'from.register.court', 'BT-33')
  req.items?.forEach((item, i) => {
    for (const [k, bt] of Object.entries(ITEM_TERMS)) check(item?.[k], `items[${i}].${k}`, bt)
  })
  return out
}

/** The text as the XML writes it: CRLF and CR as LF. */
export function xmlLineBreaks(value: string): string {
  return value.replace(/\r\n?/g, '\n')
}
