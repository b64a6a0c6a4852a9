// The account's invoices for GET /invoices: newest first by (created_at, id), filtered, a page at
// a time over every slot of the partitioned collection (partitioned.ts, pageNewestFirst). Only
// the fields a listing shows are read: single invoices carry their PDF on the document.
import type { Db, Filter } from 'mongodb'
import { invoiceSlots, type InvoiceDoc, type InvoiceKind, type InvoiceStatus } from './invoice-store.ts'

export interface InvoiceListFilter {
  accountId: string
  /** Case-insensitive part of the invoice number. */
  number?: string
  /** Case-insensitive part of the recipient's name or e-mail. */
  recipient?: string
  createdFrom?: Date
  /** Exclusive. */
  createdTo?: Date
  format?: string
  kind?: Extract<InvoiceKind, 'single' | 'batch'>
  status?: InvoiceStatus
}

export interface InvoiceListRow {
  _id: string
  kind: InvoiceKind
  batch_id?: string
  row?: number
  status: InvoiceStatus
  created_at: Date
  size_bytes?: number
  error?: { status: number; message: string }
  invoice_number?: string
  recipient_name?: string
  recipient_email?: string
  date?: string
  due_date?: string
  currency?: string
  format?: string
}

/** A position in the listing: the last row of a page. */
export interface ListCursor {
  created_at: Date
  id: string
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const contains = (s: string) => ({ $regex: escapeRegex(s), $options: 'i' })

export function listFilter(f: InvoiceListFilter): Filter<InvoiceDoc> {
  // account_id first: the embedded engine tests fields in order, and it narrows most.
  const and: Filter<InvoiceDoc>[] = [{ account_id: f.accountId }]
  // Demo invoices have no account; a kind filter keeps to what the account made itself.
  if (f.kind) and.push({ kind: f.kind })
  if (f.status) and.push({ status: f.status })
  if (f.createdFrom || f.createdTo) and.push({ created_at: { ...(f.createdFrom ? { $gte: f.createdFrom } : {}), ...(f.createdTo ? { $lt: f.createdTo } : {}) } })
  // An invoice without a format is a PDF.
  if (f.format) and.push(f.format === 'pdf' ? { $or: [{ 'request.format': 'pdf' }, { 'request.format': { $exists: false } }] } : { 'request.format': f.format })
  if (f.number) and.push({ 'request.invoice_number': contains(f.number) })
  if (f.recipient) and.push({ $or: [{ 'request.to.name': contains(f.recipient) }, { 'request.to.email': contains(f.recipient) }] })
  return (and.length === 1 ? and[0] : { $and: and }) as Filter<InvoiceDoc>
}

export async function listInvoices(db: Db, f: InvoiceListFilter, limit: number, before?: ListCursor): Promise<InvoiceListRow[]> {
  return invoiceSlots(db).pageNewestFirst<InvoiceListRow>(
    listFilter(f),
    { time: 'created_at', tie: '_id' },
    limit,
    {
      kind: 1,
      batch_id: 1,
      row: 1,
      status: 1,
      size_bytes: 1,
      error: 1,
      invoice_number: '$request.invoice_number',
      recipient_name: '$request.to.name',
      recipient_email: '$request.to.email',
      date: '$request.date',
      due_date: '$request.due_date',
      currency: '$request.currency',
      format: '$request.format',
    },
    before ? { time: before.created_at, tie: before.id } : undefined,
  )
}
