// Reading a batch request body: the batch path is excluded from the shared JSON parser (it also
// takes application/x-ndjson), so it is read here with its own size cap and split into rows.
import type { Context } from 'koa'
import { HttpError, badRequest } from '../../platform/http/errors.ts'
import { readRawBody } from '../../platform/http/raw-body.ts'

/** 1,000 rows of generous invoices; larger bodies are refused before they are buffered. */
export const MAX_BATCH_BYTES = 32 * 1024 * 1024

export type BodyFormat = 'json' | 'ndjson'

export function bodyFormat(ctx: Context): BodyFormat {
  if (ctx.is('application/x-ndjson', 'application/jsonl', 'application/json-seq')) return 'ndjson'
  if (ctx.is('json')) return 'json'
  throw new HttpError(415, 'Content-Type must be application/json (an array of invoices) or application/x-ndjson (one invoice per line)')
}

/** The body as UTF-8 text, refusing compressed bodies and anything above the cap. */
export async function readBodyText(ctx: Context, maxBytes = MAX_BATCH_BYTES): Promise<string> {
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase()
  if (encoding !== 'identity') throw new HttpError(415, 'Unsupported content encoding')
  return (await readRawBody(ctx, maxBytes, `Request body too large (at most ${maxBytes} bytes)`)).toString('utf8')
}

/** Rows of the batch, unvalidated. JSON: an array; NDJSON: one JSON value per non-blank line. */
export function splitRows(text: string, format: BodyFormat): unknown[] {
  if (!text.trim()) throw badRequest('Request body is empty: send a JSON array of invoices or one invoice per line (NDJSON)')
  if (format === 'json') {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw badRequest('Malformed JSON body')
    }
    if (!Array.isArray(parsed)) throw badRequest('body must be a JSON array of invoices')
    return parsed
  }
  const rows: unknown[] = []
  const lines = text.split('\n')
  const bad: string[] = []
  lines.forEach((line, i) => {
    if (!line.trim()) return
    try {
      rows.push(JSON.parse(line))
    } catch {
      bad.push(`rows[${rows.length}] (line ${i + 1}) is not valid JSON`)
      rows.push(undefined)
    }
  })
  if (bad.length) throw badRequest(bad[0]!, { errors: bad.slice(0, 100) })
  return rows
}
