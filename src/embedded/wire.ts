// Just enough of the MongoDB wire protocol for the write journal (journal-proxy.ts): cutting a
// byte stream into messages, reading an OP_MSG's command (name, collection, database, top-level
// fields) and its document sequences, the handshake's legacy OP_QUERY and OP_REPLY, and making
// the few messages the proxy writes itself (an error reply, a handshake reply without a field).
import { BSON, type Document } from 'mongodb'

export const OP_REPLY = 1
export const OP_QUERY = 2004
export const OP_MSG = 2013
export const OP_COMPRESSED = 2012
/** OP_MSG flag bits: a trailing CRC-32C, and "no reply will follow" (an unacknowledged write). */
const CHECKSUM_PRESENT = 1
export const MORE_TO_COME = 2

export interface Header {
  length: number
  requestId: number
  responseTo: number
  opCode: number
}

export function header(msg: Buffer): Header {
  return { length: msg.readInt32LE(0), requestId: msg.readInt32LE(4), responseTo: msg.readInt32LE(8), opCode: msg.readInt32LE(12) }
}

/** Cuts a TCP byte stream into whole messages (each a Buffer starting with its header). */
export class MessageFramer {
  private chunks: Buffer[] = []
  private bytes = 0
  /** Length of the message being gathered, once its first 4 bytes are in. */
  private need = 0

  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk)
    this.bytes += chunk.length
    const out: Buffer[] = []
    for (;;) {
      if (this.need === 0) {
        if (this.bytes < 4) break
        if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks, this.bytes)]
        this.need = this.chunks[0]!.readInt32LE(0)
        // Smaller than a header: not the wire protocol (and a loop that would never advance).
        if (this.need < 16) throw new Error(`malformed wire message length ${this.need}`)
      }
      // Joined only once the whole message is here: a 16 MB reply arrives in hundreds of reads,
      // and joining at every read copied gigabytes (a snapshot of large documents took minutes
      // and starved the engine's other connections).
      if (this.bytes < this.need) break
      const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes)
      out.push(buf.subarray(0, this.need))
      const rest = buf.subarray(this.need)
      this.chunks = rest.length ? [rest] : []
      this.bytes = rest.length
      this.need = 0
    }
    return out
  }
}

/** The first element's name and, when it is a string, its value: a command's name and collection. */
export function firstElement(msg: Buffer): { name: string; value: string | null } | null {
  const h = header(msg)
  if (h.opCode !== OP_MSG) return null
  // Sections start after the header and the flag bits; a kind-0 section holds the command body.
  let at = 20
  const end = msgEnd(msg)
  while (at < end) {
    const kind = msg[at]!
    if (kind === 0) {
      const doc = at + 1
      const type = msg[doc + 4]!
      const nameEnd = msg.indexOf(0, doc + 5)
      const name = msg.toString('latin1', doc + 5, nameEnd)
      if (type !== 0x02) return { name, value: null }
      const strLen = msg.readInt32LE(nameEnd + 1)
      return { name, value: msg.toString('utf8', nameEnd + 5, nameEnd + 5 + strLen - 1) }
    }
    at += 1 + msg.readInt32LE(at + 1)
  }
  return null
}

function msgEnd(msg: Buffer): number {
  return msg.readUInt32LE(16) & CHECKSUM_PRESENT ? msg.length - 4 : msg.length
}

export function flags(msg: Buffer): number {
  return msg.readUInt32LE(16)
}

/** The OP_MSG's sections (everything after the flag bits, without a checksum): what the journal keeps. */
export function sections(msg: Buffer): Buffer {
  return msg.subarray(20, msgEnd(msg))
}

/** The command an OP_MSG carries: its body with each document sequence put back as an array field. */
export function commandOf(sectionBytes: Buffer, opts: BSON.DeserializeOptions = {}): Document {
  let body: Document | null = null
  const sequences: [string, Document[]][] = []
  let at = 0
  while (at < sectionBytes.length) {
    const kind = sectionBytes[at]!
    if (kind === 0) {
      const len = sectionBytes.readInt32LE(at + 1)
      body = BSON.deserialize(sectionBytes.subarray(at + 1, at + 1 + len), opts)
      at += 1 + len
    } else if (kind === 1) {
      const size = sectionBytes.readInt32LE(at + 1)
      const end = at + 1 + size
      const idEnd = sectionBytes.indexOf(0, at + 5)
      const id = sectionBytes.toString('utf8', at + 5, idEnd)
      const docs: Document[] = []
      for (let d = idEnd + 1; d < end; d += sectionBytes.readInt32LE(d)) docs.push(BSON.deserialize(sectionBytes.subarray(d, d + sectionBytes.readInt32LE(d)), opts))
      sequences.push([id, docs])
      at = end
    } else {
      throw new Error(`unknown OP_MSG section kind ${kind}`)
    }
  }
  if (!body) throw new Error('an OP_MSG without a body section')
  for (const [id, docs] of sequences) body[id] = docs
  return body
}

/** The reply document of an OP_MSG reply. */
export function replyOf(msg: Buffer): Document {
  return commandOf(sections(msg))
}

/** Byte size of a BSON element's value of `type` at `at` in `doc` (null: a type this reader does not know). */
function valueSize(doc: Buffer, type: number, at: number): number | null {
  switch (type) {
    case 0x01: case 0x09: case 0x11: case 0x12: return 8 // double, date, timestamp, int64
    case 0x02: case 0x0d: case 0x0e: return 4 + doc.readInt32LE(at) // string, code, symbol
    case 0x03: case 0x04: case 0x0f: return doc.readInt32LE(at) // document, array, code with scope
    case 0x05: return 5 + doc.readInt32LE(at) // binary
    case 0x06: case 0x0a: case 0xff: case 0x7f: return 0 // undefined, null, min, max
    case 0x07: return 12 // ObjectId
    case 0x08: return 1
    case 0x0b: { const a = doc.indexOf(0, at); return doc.indexOf(0, a + 1) + 1 - at } // regex: two cstrings
    case 0x0c: return 4 + doc.readInt32LE(at) + 12 // DBPointer
    case 0x10: return 4
    case 0x13: return 16
    default: return null
  }
}

export interface Element {
  type: number
  name: string
  /** Where the element (its type byte) begins, where its value begins, and the byte after it. */
  at: number
  valueAt: number
  end: number
}

/** The top-level elements of the BSON document at `at` in `buf`, without decoding their values. */
export function elements(buf: Buffer, at = 0): Element[] {
  const out: Element[] = []
  const docEnd = at + buf.readInt32LE(at) - 1
  let p = at + 4
  while (p < docEnd) {
    const type = buf[p]!
    const nameEnd = buf.indexOf(0, p + 1)
    if (nameEnd < 0 || nameEnd >= docEnd) throw new Error('a BSON element without a name')
    const size = valueSize(buf, type, nameEnd + 1)
    if (size === null || size < 0) throw new Error(`BSON type ${type} of field ${buf.toString('latin1', p + 1, nameEnd)}`)
    out.push({ type, name: buf.toString('utf8', p + 1, nameEnd), at: p, valueAt: nameEnd + 1, end: nameEnd + 1 + size })
    p = nameEnd + 1 + size
  }
  return out
}

/** Where the body (kind-0 section) document of an OP_MSG begins, or -1. */
export function bodyAt(msg: Buffer): number {
  let at = 20
  const end = msgEnd(msg)
  while (at < end) {
    if (msg[at] === 0) return at + 1
    at += 1 + msg.readInt32LE(at + 1)
  }
  return -1
}

/** An OP_QUERY's namespace and where its query document begins. */
export function queryOf(msg: Buffer): { ns: string; docAt: number } {
  const nsEnd = msg.indexOf(0, 20)
  return { ns: msg.toString('utf8', 20, nsEnd), docAt: nsEnd + 9 }
}

/** The BSON document at `at` without its top-level field `name` (the other bytes as they were). */
export function withoutField(buf: Buffer, at: number, name: string): Buffer {
  const els = elements(buf, at)
  const kept = els.filter((e) => e.name !== name)
  const body = Buffer.concat(kept.map((e) => buf.subarray(e.at, e.end)))
  const doc = Buffer.alloc(4 + body.length + 1)
  doc.writeInt32LE(doc.length, 0)
  body.copy(doc, 4)
  return doc
}

function withHeader(requestId: number, responseTo: number, opCode: number, rest: Buffer[]): Buffer {
  const h = Buffer.alloc(16)
  const msg = Buffer.concat([h, ...rest])
  msg.writeInt32LE(msg.length, 0)
  msg.writeInt32LE(requestId, 4)
  msg.writeInt32LE(responseTo, 8)
  msg.writeInt32LE(opCode, 12)
  return msg
}

/** An OP_MSG reply holding `doc`. */
export function opMsgReply(requestId: number, responseTo: number, doc: Document | Buffer): Buffer {
  return withHeader(requestId, responseTo, OP_MSG, [Buffer.alloc(4), Buffer.from([0]), Buffer.isBuffer(doc) ? doc : Buffer.from(BSON.serialize(doc))])
}

/** An OP_REPLY (the answer to a legacy OP_QUERY) holding `doc`. */
export function opReply(requestId: number, responseTo: number, doc: Document | Buffer): Buffer {
  const fields = Buffer.alloc(20)
  fields.writeInt32LE(1, 16) // numberReturned
  return withHeader(requestId, responseTo, OP_REPLY, [fields, Buffer.isBuffer(doc) ? doc : Buffer.from(BSON.serialize(doc))])
}

/**
 * A reply (OP_MSG or OP_REPLY) with its document's top-level `field` removed; the reply as it
 * was when it has none. An OP_MSG loses its checksum (it would no longer match).
 */
export function replyWithout(msg: Buffer, field: string): Buffer {
  const h = header(msg)
  const at = h.opCode === OP_MSG ? bodyAt(msg) : h.opCode === OP_REPLY && msg.readInt32LE(32) >= 1 ? 36 : -1
  if (at < 0 || !elements(msg, at).some((e) => e.name === field)) return msg
  const doc = withoutField(msg, at, field)
  if (h.opCode === OP_MSG) return opMsgReply(h.requestId, h.responseTo, doc)
  // Its flags, cursor id and starting point as they were; one document (a handshake reply has one).
  return withHeader(h.requestId, h.responseTo, OP_REPLY, [msg.subarray(16, 32), Buffer.from([1, 0, 0, 0]), doc])
}
