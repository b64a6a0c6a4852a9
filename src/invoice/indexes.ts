// Every index the invoice service needs.
import type { IndexSpec } from '../platform/store/mongo.ts'
import { usageIndexes } from './store/quota-store.ts'
import { batchIndexes } from './batch/batch-store.ts'
import { idempotencyIndexes } from './idempotency.ts'
import { invoiceIndexes } from './store/invoice-store.ts'
import { pdfIndexes } from './store/pdf-store.ts'

export const invoiceServiceIndexes: IndexSpec[] = [usageIndexes, invoiceIndexes, batchIndexes, idempotencyIndexes, pdfIndexes]
