// How every invoice route answers with a PDF (or an e-invoice's XML): a download, never cached
// (it is one account's data).
import type { Context } from 'koa'

/** Media type and file extension of each output format: facturx is a PDF, ubl and xrechnung are XML. */
export function outputOf(format: string | undefined): { type: string; ext: 'pdf' | 'xml' } {
  return format === 'ubl' || format === 'xrechnung' ? { type: 'application/xml', ext: 'xml' } : { type: 'application/pdf', ext: 'pdf' }
}

/** Send a rendered invoice as `<basename>.pdf|xml` with its format's media type. */
export function sendInvoiceFile(ctx: Context, bytes: Buffer, format: string | undefined, basename: string): void {
  const { type, ext } = outputOf(format)
  sendPdf(ctx, bytes, `${basename}.${ext}`)
  ctx.type = type
}

export function sendPdf(ctx: Context, pdf: Buffer, filename: string): void {
  ctx.status = 200
  ctx.type = 'application/pdf'
  ctx.set('Content-Disposition', `attachment; filename="${filename}"`)
  ctx.set('Cache-Control', 'no-store')
  ctx.body = pdf
}
