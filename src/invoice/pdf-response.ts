// How every invoice route answers with a PDF: a download, never cached (it is one account's data).
import type { Context } from 'koa'

export function sendPdf(ctx: Context, pdf: Buffer, filename: string): void {
  ctx.status = 200
  ctx.type = 'application/pdf'
  ctx.set('Content-Disposition', `attachment; filename="${filename}"`)
  ctx.set('Cache-Control', 'no-store')
  ctx.body = pdf
}
