// The invoice the invoice benchmarks render: 20 lines, both parties with addresses, tax, a
// discount, notes, payment details and a footer (a realistic invoice, not a one-line one);
// invoiceOfLines(n) is the same invoice with n lines (bench:invoice's 200- and 1,000-line cases).
import type { InvoiceRequest } from '../../../src/invoice/invoice-schema.ts'

export function invoiceOfLines(lines: number): InvoiceRequest {
  return {
    invoice_number: 'BENCH-0001',
    date: '2026-11-21',
    due_date: '2026-12-21',
    from: { name: 'Acme Tools Ltd', address: '1 Forge Lane\nSheffield S1 2AB', email: 'billing@acme.test', phone: '+44 20 7946 0000' },
    to: { name: 'Globex Corporation', address: '500 Main St\nSpringfield', email: 'ap@globex.test' },
    items: Array.from({ length: lines }, (_, i) => ({ description: `Consulting services, phase ${i + 1}`, quantity: (i % 4) + 1, unit_price: 95.5 + i })),
    tax_rate: 20,
    discount: 50,
    notes: 'Thank you for your business.',
    payment_info: 'Bank: First Test Bank\nIBAN: GB33 BUKB 2020 1555 5555 55',
    footer: 'Acme Tools Ltd · Registered in England No. 01234567',
  }
}

export const invoice20: InvoiceRequest = invoiceOfLines(20)
