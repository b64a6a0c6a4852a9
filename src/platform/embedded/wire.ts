// Just enough of the MongoDB wire protocol for the write journal (journal-proxy.ts): cutting a
// byte stream into messages, and reading an OP_MSG's command (name, collection, database) and
// its document sequences. Everything else passes through as opaque bytes.
import { BSON, type Document } from 'mongodb'

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
