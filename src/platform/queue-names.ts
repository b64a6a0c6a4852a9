// Every queue the platform knows. One job kind per queue, named as in DESIGN.md §5.
export const QueueName = {
  InvoiceRender: 'invoice-render',
  InvoiceBatchRender: 'invoice-batch-render',
  CaptureForward: 'capture-forward',
  CaptureReplay: 'capture-replay',
  CapturesExpire: 'captures-expire',
  UsageReset: 'usage-reset',
  PaymentReconcile: 'payment-reconcile',
  OutboxSweep: 'outbox-sweep',
  InvoiceBatchWatch: 'invoice-batch-watch',
  InvoiceBatchCallback: 'invoice-batch-callback',
  InvoicesExpire: 'invoices-expire',
} as const

export type QueueName = (typeof QueueName)[keyof typeof QueueName]

export const ALL_QUEUES: QueueName[] = Object.values(QueueName)
