// Which slot of the partitioned invoice collections (invoices, invoice_pdfs) an id lives in: its
// first SLOT_KEY characters, which a batch's rows share with the batch id (batchRowId), so a
// batch's rows and their PDFs are one collection each (docs/embedded-store.md).
import { base62 } from '../../platform/ids.ts'

const SLOT_KEY = 8
export const slotKey = (id: string) => id.slice(0, SLOT_KEY)
/** A random id for a row of batch `batchId`, in the batch's slot (same length as randomId()). */
export const batchRowId = (batchId: string) => slotKey(batchId) + base62(22 - SLOT_KEY)
