// pdf-lib's PDF parser with one change: the object streams and cross-reference streams it decodes
// while parsing are first decoded here within the request's InflateBudget, and handed back to it
// already decoded, so pdf-lib itself never inflates anything of a received PDF (its own inflater
// has no cap: a 10 MB object stream could inflate to gigabytes). It also stops at the read's
// deadline, checked at every object.
import { PDFName, PDFParser, PDFRawStream, type PDFObject, type PDFRef } from '@cantoo/pdf-lib'
import type { InflateBudget } from './inflate-budget.ts'
import type { ReadDeadline } from './read-deadline.ts'

/** The stream types pdf-lib's PDFParser decodes as it parses (PDFParser.parseIndirectObject). */
const DECODED_WHILE_PARSING = new Map([
  [PDFName.of('ObjStm'), 'object stream'],
  [PDFName.of('XRef'), 'cross-reference stream'],
])

export class CappedPdfParser extends PDFParser {
  /** The budget's refusal, kept because pdf-lib catches errors of one object and reports its own. */
  refusal: Error | undefined

  constructor(
    bytes: Uint8Array,
    private readonly budget: InflateBudget,
    private readonly deadline?: ReadDeadline,
  ) {
    // 100 objects per tick: a large PDF does not hold the event loop for the whole parse.
    super(bytes, 100, true)
  }

  override parseObject(ref?: PDFRef): PDFObject {
    try {
      this.deadline?.check('parsing the PDF')
    } catch (err) {
      this.refusal ??= err as Error
      throw err
    }
    const object = super.parseObject(ref)
    if (!(object instanceof PDFRawStream)) return object
    const what = DECODED_WHILE_PARSING.get(object.dict.lookup(PDFName.of('Type')) as PDFName)
    if (!what) return object
    try {
      const decoded = this.budget.decode(object, what)
      const dict = object.dict.clone(object.dict.context)
      dict.delete(PDFName.of('Filter'))
      dict.delete(PDFName.of('DecodeParms'))
      dict.set(PDFName.of('Length'), object.dict.context.obj(decoded.length))
      return PDFRawStream.of(dict, decoded)
    } catch (err) {
      this.refusal ??= err as Error
      throw err
    }
  }
}
