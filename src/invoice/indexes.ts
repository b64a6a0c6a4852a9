// Every index the invoice service needs.
import type { IndexSpec } from '../platform/mongo.ts'
import { usageIndexes } from './quota.ts'
import { batchIndexes } from './batch-store.ts'
import { idempotencyIndexes } from './idempotency.ts'
import { invoiceIndexes } from './store.ts'
import { pdfIndexes } from './pdf-store.ts'

export const invoiceServiceIndexes: IndexSpec[] = [usageIndexes, invoiceIndexes, batchIndexes, idempotencyIndexes, pdfIndexes]
