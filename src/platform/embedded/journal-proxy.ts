// The one door to the embedded engine while `start` keeps its data: a TCP proxy every client
// (the APIs, the worker processes, the snapshot thread) connects through. It sees every write
// whatever process or code path makes it, and journals it (journal.ts) when the engine's
// acknowledgement passes by, before handing that acknowledgement on. It also makes each
// snapshot's read of a collection a clean cut of the journal: the read begins when no write to
// that collection is under way, and writes to it wait until the engine has opened the read (its
// cursors see the collection as it was when opened). docs/embedded-store.md, "The write journal".
import { createServer, connect, type Server, type Socket } from 'node:net'
import { logger } from '../logger.ts'
import type { Journal, JournalRecord } from './journal.ts'
import { CUT_COMMENT } from './snapshot.ts'
import { MessageFramer, MORE_TO_COME, OP_COMPRESSED, OP_MSG, firstElement, flags, header, replyOf, sections } from './wire.ts'

const commentOf = (msg: Buffer): unknown => replyOf(msg).comment

/** The commands that change data. Index and collection commands are not journaled: the start creates them. */
export const WRITE_COMMANDS = new Set(['insert', 'update', 'delete', 'findAndModify'])
const CUT_MARK = Buffer.from(CUT_COMMENT)

export interface JournalProxy {
  /** `mongodb://127.0.0.1:<port>/…`: the engine's address with the proxy's port. */
  url: string
  /** From now on, record the cut of every collection a snapshot reads. */
  beginCuts(): void
  /** The cuts since beginCuts: collection → last sequence number the snapshot holds for it. */
  endCuts(): Record<string, number>
  /** Sequence number of the last journaled write to a collection in this run (0: none). */
  lastWrite(coll: string): number
  close(): Promise<void>
}

interface PendingWrite {
  coll: string
  m: Buffer
}

interface Conn {
  client: Socket
  upstream: Socket
  queue: Buffer[]
  writes: Map<number, PendingWrite>
  cutFinds: Map<number, string>
}

export async function startJournalProxy(opts: { engineUrl: string; journal: Journal }): Promise<JournalProxy> {
  const target = new URL(opts.engineUrl)
  const journal = opts.journal
  const conns = new Set<Conn>()
  /** Writes sent to the engine and not answered yet, per collection. */
  const inflight = new Map<string, number>()
  /** Collections whose snapshot read is being opened: their writes wait. */
  const cutting = new Set<string>()
  let cuts: Record<string, number> | null = null
  const lastWrites = new Map<string, number>()
  let compressedSeen = false

  const classify = (msg: Buffer): { kind: 'write' | 'cut'; coll: string } | null => {
    const h = header(msg)
    if (h.opCode === OP_COMPRESSED && !compressedSeen) {
      compressedSeen = true
      logger.warn('a client of the embedded engine compresses its messages: its writes are not journaled')
    }
    if (h.opCode !== OP_MSG) return null
    const first = firstElement(msg)
    if (!first?.value) return null
    if (WRITE_COMMANDS.has(first.name)) return { kind: 'write', coll: first.value }
    // The bytes first (cheap); then the comment itself, not a filter that happens to hold them.
    if (first.name === 'find' && msg.indexOf(CUT_MARK, 20) >= 0 && commentOf(msg) === CUT_COMMENT) return { kind: 'cut', coll: first.value }
    return null
  }

  /** Send what a connection has queued, in order, up to the first message that must wait. */
  const pump = (c: Conn): void => {
    const out: Buffer[] = []
    while (c.queue.length) {
      const msg = c.queue[0]!
      const what = classify(msg)
      if (what?.kind === 'write') {
        if (cutting.has(what.coll)) break
        const id = header(msg).requestId
        if (flags(msg) & MORE_TO_COME) {
          // Nobody waits for an answer (w: 0): it counts as acknowledged once sent.
          const s = journal.next()
          journal.append([{ s, m: Buffer.from(sections(msg)) }])
          lastWrites.set(what.coll, s)
        } else {
          inflight.set(what.coll, (inflight.get(what.coll) ?? 0) + 1)
          c.writes.set(id, { coll: what.coll, m: sections(msg) })
        }
      } else if (what?.kind === 'cut') {
        cutting.add(what.coll)
        if (inflight.get(what.coll)) break // sent once the writes under way are answered
        if (cuts) cuts[what.coll] = journal.lastSeq
        c.cutFinds.set(header(msg).requestId, what.coll)
      }
      out.push(msg)
      c.queue.shift()
    }
    if (out.length) c.upstream.write(out.length === 1 ? out[0]! : Buffer.concat(out))
  }

  const pumpAll = () => {
    for (const c of conns) if (c.queue.length) pump(c)
  }

  const written = (coll: string) => {
    const n = (inflight.get(coll) ?? 1) - 1
    if (n > 0) inflight.set(coll, n)
    else {
      inflight.delete(coll)
      if (cutting.has(coll)) pumpAll()
    }
  }

  const onReplies = (c: Conn, msgs: Buffer[]) => {
    const records: JournalRecord[] = []
    let released = false
    for (const msg of msgs) {
      const to = header(msg).responseTo
      const w = c.writes.get(to)
      if (w) {
        c.writes.delete(to)
        const rec = recordOf(w, msg)
        if (rec) {
          const s = journal.next()
          records.push({ ...rec, s })
          lastWrites.set(w.coll, s)
        }
        written(w.coll)
        continue
      }
      const cutColl = c.cutFinds.get(to)
      if (cutColl !== undefined) {
        c.cutFinds.delete(to)
        cutting.delete(cutColl)
        released = true
      }
    }
    // On disk (the kernel's cache) before the client hears of it.
    journal.append(records)
    c.client.write(msgs.length === 1 ? msgs[0]! : Buffer.concat(msgs))
    if (released) pumpAll()
  }

  const server: Server = createServer((client) => {
    client.setNoDelay(true)
    const upstream = connect({ host: target.hostname, port: Number(target.port) })
    upstream.setNoDelay(true)
    const c: Conn = { client, upstream, queue: [], writes: new Map(), cutFinds: new Map() }
    conns.add(c)
    const fromClient = new MessageFramer()
    const fromEngine = new MessageFramer()
    // Bytes that are not the wire protocol end that connection, never the process (the proxy is
    // the one door to the store for every client).
    const framed = (framer: MessageFramer, chunk: Buffer): Buffer[] => {
      try {
        return framer.push(chunk)
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'the embedded engine proxy closed a connection that broke the wire protocol')
        end()
        return []
      }
    }
    client.on('data', (chunk: Buffer) => {
      const msgs = framed(fromClient, chunk)
      if (!msgs.length) return
      c.queue.push(...msgs)
      pump(c)
    })
    upstream.on('data', (chunk: Buffer) => {
      const msgs = framed(fromEngine, chunk)
      if (msgs.length) onReplies(c, msgs)
    })
    let gone = false
    const end = () => {
      if (gone) return
      gone = true
      conns.delete(c)
      client.destroy()
      upstream.destroy()
      // Writes never answered were never acknowledged: nothing to journal, but no cut waits for them.
      for (const w of c.writes.values()) written(w.coll)
      for (const coll of c.cutFinds.values()) cutting.delete(coll)
      // A cut this connection was waiting to send is given up with it.
      const head = c.queue[0] && classify(c.queue[0])
      if (head && head.kind === 'cut') cutting.delete(head.coll)
      c.writes.clear()
      c.cutFinds.clear()
      c.queue = []
      pumpAll()
    }
    for (const s of [client, upstream]) {
      s.on('error', end)
      s.on('close', end)
    }
  })
  await new Promise<void>((res, rej) => server.once('error', rej).listen(0, '127.0.0.1', () => res()))
  const port = (server.address() as { port: number }).port
  const url = new URL(opts.engineUrl)
  url.port = String(port)

  return {
    url: url.toString(),
    beginCuts() {
      cuts = {}
    },
    endCuts() {
      const got = cuts ?? {}
      cuts = null
      return got
    },
    lastWrite: (coll) => lastWrites.get(coll) ?? 0,
    async close() {
      await new Promise<void>((res) => {
        server.close(() => res())
        for (const c of conns) {
          c.client.destroy()
          c.upstream.destroy()
        }
      })
    },
  }
}

/** What replay needs of an acknowledged write's answer; null when nothing was written. */
function recordOf(w: PendingWrite, reply: Buffer): Omit<JournalRecord, 's'> | null {
  if (header(reply).opCode !== OP_MSG) return null
  let doc
  try {
    doc = replyOf(reply)
  } catch {
    return null
  }
  if (Number(doc.ok) !== 1) return null
  const rec: Omit<JournalRecord, 's'> = { m: Buffer.from(w.m) }
  if (Array.isArray(doc.upserted) && doc.upserted.length) rec.up = doc.upserted.map((u: { index: number; _id: unknown }) => [Number(u.index), u._id])
  const upsertedByFam = doc.lastErrorObject?.upserted
  if (upsertedByFam !== undefined) rec.up = [[0, upsertedByFam]]
  if (Array.isArray(doc.writeErrors) && doc.writeErrors.length) rec.err = doc.writeErrors.map((e: { index: number }) => Number(e.index))
  return rec
}
