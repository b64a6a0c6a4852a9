// The invoice being edited: every field as the text typed (so a half-typed "1." stays on screen),
// turned into the API's request body by toRequest() — empty fields left out, numbers sent as the
// numbers typed, anything else sent as typed so the service names what is wrong with it — and back
// by fromRequest() (a received e-invoice loaded into the editor). Fields the editor has no input
// for are kept aside and sent back unchanged, so loading and downloading loses nothing.
import { signal } from '@preact/signals'

export const PARTY_FIELDS = ['name', 'address', 'email', 'phone', 'street', 'city', 'postal_code', 'country', 'vat_id', 'tax_number', 'legal_id', 'peppol_id'] as const
export type PartyField = (typeof PARTY_FIELDS)[number]
export type PartyDraft = Record<PartyField, string> & { rest: Record<string, unknown> }

export const ADJ_FIELDS = ['amount', 'reason', 'reason_code', 'tax_category', 'tax_rate'] as const
export type AdjDraft = Record<(typeof ADJ_FIELDS)[number], string> & { key: number; rest: Record<string, unknown> }
/** A line's allowances and charges (BG-27, BG-28) have no VAT of their own: the line's applies. */
export const LINE_ADJ_FIELDS = ['amount', 'reason', 'reason_code'] as const

export const LINE_FIELDS = ['description', 'quantity', 'unit_price', 'unit', 'tax_rate', 'tax_category'] as const
export type LineDraft = Record<(typeof LINE_FIELDS)[number], string> & { key: number; allowances: AdjDraft[]; charges: AdjDraft[]; rest: Record<string, unknown> }

export const TEXT_FIELDS = [
  'format',
  'document_type',
  'locale',
  'currency',
  'currency_symbol',
  'invoice_number',
  'date',
  'due_date',
  'delivery_date',
  'buyer_reference',
  'order_reference',
  'tax_rate',
  'tax_category',
  'tax_exemption_reason',
  'discount',
  'notes',
  'footer',
  'logo_url',
  'payment_info',
  'payment_qr',
] as const
export type TextField = (typeof TEXT_FIELDS)[number]
export const PAYMENT_FIELDS = ['iban', 'bic', 'account_name', 'reference', 'terms'] as const

export type Draft = Record<TextField, string> & {
  from: PartyDraft
  to: PartyDraft
  payment: Record<(typeof PAYMENT_FIELDS)[number], string> & { rest: Record<string, unknown> }
  items: LineDraft[]
  allowances: AdjDraft[]
  charges: AdjDraft[]
  rest: Record<string, unknown>
}

/** Fields sent as numbers. */
const NUMERIC = new Set(['tax_rate', 'discount', 'quantity', 'unit_price', 'amount'])

let keys = 0
export const nextKey = () => ++keys

const blank = <K extends string>(fields: readonly K[]) => Object.fromEntries(fields.map((f) => [f, ''])) as Record<K, string>
export const emptyParty = (): PartyDraft => ({ ...blank(PARTY_FIELDS), rest: {} })
export const emptyLine = (): LineDraft => ({ ...blank(LINE_FIELDS), quantity: '1', key: nextKey(), allowances: [], charges: [], rest: {} })
export const emptyAdjustment = (): AdjDraft => ({ ...blank(ADJ_FIELDS), key: nextKey(), rest: {} })

export function sampleDraft(): Draft {
  const today = new Date().toISOString().slice(0, 10)
  return {
    ...blank(TEXT_FIELDS),
    format: 'pdf',
    invoice_number: 'INV-001',
    date: today,
    currency_symbol: '$',
    tax_rate: '20',
    notes: 'Thank you for your business!',
    from: { ...emptyParty(), name: 'Acme Tools Ltd', address: '1 Forge Lane\nSheffield', email: 'billing@acme.test' },
    to: { ...emptyParty(), name: 'Globex Corporation', address: '500 Main St\nSpringfield' },
    payment: { ...blank(PAYMENT_FIELDS), rest: {} },
    items: [{ ...emptyLine(), description: 'Consulting', quantity: '1.5', unit_price: '120' }],
    allowances: [],
    charges: [],
    rest: {},
  }
}

export const draft = signal<Draft>(sampleDraft())

/** A number as typed ("1.50" → 1.5); text that is not one goes as typed, for the service to name. */
function value(field: string, s: string): unknown {
  const t = s.trim()
  if (t === '') return undefined
  if (NUMERIC.has(field) && /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return Number(t)
  return NUMERIC.has(field) ? t : s
}

function fieldsOf(d: Record<string, any>, fields: readonly string[], rest: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = { ...rest }
  for (const f of fields) {
    const v = value(f, d[f] ?? '')
    if (v !== undefined) out[f] = v
  }
  return Object.keys(out).length ? out : undefined
}

const list = <T extends Record<string, any>>(rows: T[], fields: readonly string[]) => {
  const out = rows.map((r) => fieldsOf(r, fields, r.rest) ?? {})
  return out.length ? out : undefined
}

/** The API's request body for the draft (format included; the caller drops it where it must). */
export function toRequest(d: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = { ...d.rest, ...fieldsOf(d, TEXT_FIELDS, {}) }
  if (body.format === 'pdf') delete body.format
  for (const p of ['from', 'to'] as const) {
    const v = fieldsOf(d[p], PARTY_FIELDS, d[p].rest)
    if (v) body[p] = v
  }
  const payment = fieldsOf(d.payment, PAYMENT_FIELDS, d.payment.rest)
  if (payment) body.payment = payment
  body.items = d.items.map((l) => {
    const item: Record<string, unknown> = fieldsOf(l, LINE_FIELDS, l.rest) ?? {}
    const allowances = list(l.allowances, LINE_ADJ_FIELDS)
    if (allowances) item.allowances = allowances
    const charges = list(l.charges, LINE_ADJ_FIELDS)
    if (charges) item.charges = charges
    return item
  })
  const allowances = list(d.allowances, ADJ_FIELDS)
  if (allowances) body.allowances = allowances
  const charges = list(d.charges, ADJ_FIELDS)
  if (charges) body.charges = charges
  return body
}

const str = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : String(v))

function split<K extends string>(obj: Record<string, unknown> | undefined, fields: readonly K[]): Record<K, string> & { rest: Record<string, unknown> } {
  const rest: Record<string, unknown> = { ...(obj ?? {}) }
  const out = blank(fields) as Record<K, string>
  for (const f of fields) {
    // Only plain values go into inputs; an object (a party's register) stays aside.
    if (rest[f] !== undefined && typeof rest[f] !== 'object') {
      out[f] = str(rest[f])
      delete rest[f]
    }
  }
  return { ...out, rest }
}

/** A request (as the read endpoint answers a received e-invoice) as a draft. */
export function fromRequest(req: Record<string, any>): Draft {
  const top = split(req, TEXT_FIELDS)
  const { from, to, payment, items, allowances, charges, ...rest } = top.rest as Record<string, any>
  return {
    ...top,
    format: top.format || 'pdf',
    from: split(from, PARTY_FIELDS),
    to: split(to, PARTY_FIELDS),
    payment: split(payment, PAYMENT_FIELDS),
    items: (Array.isArray(items) && items.length ? items : [{}]).map((i: any) => {
      const { allowances: la, charges: lc, ...line } = i ?? {}
      const adj = (xs: any) => (Array.isArray(xs) ? xs : []).map((a: any) => ({ ...split(a, LINE_ADJ_FIELDS), tax_category: '', tax_rate: '', key: nextKey() }))
      return { ...split(line, LINE_FIELDS), key: nextKey(), allowances: adj(la), charges: adj(lc) }
    }),
    allowances: (allowances ?? []).map((a: any) => ({ ...split(a, ADJ_FIELDS), key: nextKey() })),
    charges: (charges ?? []).map((a: any) => ({ ...split(a, ADJ_FIELDS), key: nextKey() })),
    rest,
  }
}

/** The allowances or charges at `path` (`allowances`, `items[2].charges`). */
export function getList(d: Draft, path: string): AdjDraft[] {
  let o: any = d
  for (const p of path.match(/[^.[\]]+/g)!) o = o?.[/^\d+$/.test(p) ? Number(p) : p]
  return Array.isArray(o) ? o : []
}

export function setList(path: string, rows: AdjDraft[]): void {
  const d = structuredClone(draft.value) as any
  const parts = path.match(/[^.[\]]+/g)!
  let o = d
  for (const p of parts.slice(0, -1)) o = o[/^\d+$/.test(p) ? Number(p) : p]
  o[parts[parts.length - 1]!] = rows
  draft.value = d
}

/** Changes one field by its API path (`items[2].quantity`, `from.vat_id`, `payment.iban`). */
export function setField(path: string, v: string): void {
  const d = structuredClone(draft.value) as any
  const parts = path.match(/[^.[\]]+/g)!
  let o = d
  for (const p of parts.slice(0, -1)) o = o[/^\d+$/.test(p) ? Number(p) : p]
  o[parts[parts.length - 1]!] = v
  draft.value = d
}

export function getField(d: Draft, path: string): string {
  let o: any = d
  for (const p of path.match(/[^.[\]]+/g)!) o = o?.[/^\d+$/.test(p) ? Number(p) : p]
  return typeof o === 'string' ? o : ''
}
