// Decoding a received PDF's compressed streams within one byte budget per request (docs/einvoice.md,
// "Receiving e-invoices"), so a compression bomb — one stream, many streams, or filters nested in
// one stream — stops at the budget instead of filling memory. zlib's maxOutputLength is a hard cap:
// it stops inflating when the output would pass it, whatever the compressed data claims.
import { constants, inflateSync } from 'node:zlib'
import { PDFArray, PDFName, PDFRawStream, decodePDFRawStream } from '@cantoo/pdf-lib'
import { badRequest, payloadTooLarge } from '../../platform/http/errors.ts'

/** Everything a request inflates (object streams, cross-reference streams, the invoice XML). */
export const MAX_INFLATED_BYTES = 32 * 1024 * 1024

/** Filters whose output is never larger than their input: decoded by pdf-lib without a risk. */
const SHRINKING = new Set(['ASCIIHexDecode', 'ASCII85Decode'])

export class InflateBudget {
  private used = 0
  constructor(readonly limit = MAX_INFLATED_BYTES) {}

  /** The stream's bytes with its filters undone, each FlateDecode capped by what is left of the
   *  budget and by max, this stream's own limit. */
  decode(stream: PDFRawStream, what: string, max = Infinity): Buffer {
    const filter = stream.dict.lookup(PDFName.of('Filter'))
    const filters = filter instanceof PDFArray ? filter.asArray() : filter ? [filter] : []
    let bytes: Buffer = Buffer.from(stream.getContents())
    for (const f of filters) {
      const name = f instanceof PDFName ? f.decodeText() : String(f)
      if (name === 'FlateDecode') bytes = this.inflate(bytes, what, max)
      else if (SHRINKING.has(name)) bytes = Buffer.from(decodePDFRawStream(PDFRawStream.of(stream.dict.context.obj({ Filter: name }), bytes)).decode())
      // LZW and RunLength expand without a cap pdf-lib offers; PDF/A (so Factur-X) forbids LZW.
      else throw badRequest(`The PDF's ${what} uses the ${name} compression, which this service does not read (only FlateDecode, ASCIIHexDecode, ASCII85Decode)`)
    }
    return bytes
  }

  private inflate(bytes: Buffer, what: string, max: number): Buffer {
    const left = this.limit - this.used
    const tooLarge = () =>
      max < left
        ? payloadTooLarge(`The PDF's ${what} inflates to more than ${max} bytes: a compressed-stream bomb, or far larger than an invoice`)
        : payloadTooLarge(`The PDF's compressed streams inflate to more than ${this.limit} bytes (at the ${what}): a compressed-stream bomb, or a PDF far larger than an invoice`)
    if (left <= 0) throw tooLarge()
    let out: Buffer
    try {
      // Z_SYNC_FLUSH: a stream cut short (common in real PDFs) gives what it has instead of an error.
      out = inflateSync(bytes, { maxOutputLength: Math.min(left, max), finishFlush: constants.Z_SYNC_FLUSH })
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge()
      throw badRequest(`The PDF's ${what} is corrupt: its FlateDecode data does not inflate`)
    }
    this.used += out.length
    return out
  }
}
