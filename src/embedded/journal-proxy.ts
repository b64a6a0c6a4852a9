// The one door to the embedded engine while `start` keeps its data: a TCP proxy every client
// (the APIs, the worker processes, the snapshot thread) connects through. It sees every write
// whatever process or code path makes it, and journals it (journal.ts) when the engine's
// acknowledgement passes by, before handing that acknowledgement on. It also makes each
// snapshot's read of a collection a clean cut of the journal: the read begins when no write to
// that collection is under way, and writes to it wait until the engine has opened the read (its
// cursors see the collection as it was when opened). It fails closed: a message it cannot read
// (compressed: the handshake never agrees to compression) or a command it does not know to be a
// read or a journaled write is answered with an error and never reaches the engine.
// docs/embedded-store.md, "The write journal".
import { createServer, connect, type Server, type Socket } from 'node:net'
import { logger } from '../platform/logger.ts'
import { JOURNALED_COMMANDS, type Journal, type JournalRecord } from './journal.ts'
import { CUT_COMMENT } from './snapshot.ts'
import {
  MessageFramer,
  MORE_TO_COME,
  OP_COMPRESSED,
  OP_MSG,
  OP_QUERY,
  bodyAt,
  elements,
  firstElement,
  flags,
  header,
  opMsgReply,
  opReply,
  queryOf,
  replyOf,
  replyWithout,
  sections,
  type Element,
} from './wire.ts'

const commentOf = (msg: Buffer): unknown => replyOf(msg).comment

/** The commands that change data and are journaled (and replayed). */
export const WRITE_COMMANDS = JOURNALED_COMMANDS
/** The handshake: its reply loses `compression`, so that no client ever compresses. */
const HELLO = new Set(['hello', 'isMaster', 'ismaster'])
/**
 * Commands that read, or only concern the connection, the session or the server: passed on.
 * `createIndexes` changes no data and is not journaled: the start creates every index itself.
 */
const PASSED = new Set([
  'find', 'getMore', 'killCursors', 'count', 'distinct', 'aggregate', 'explain', 'listCollections', 'listIndexes', 'listDatabases',
  'ping', 'buildInfo', 'buildinfo', 'hostInfo', 'serverStatus', 'dbStats', 'collStats', 'dataSize', 'connectionStatus', 'whatsmyuri',
  'getParameter', 'getCmdLineOpts', 'getLog', 'listCommands', 'getLastError', 'getlasterror', 'validate', 'currentOp',
  'endSessions', 'startSession', 'refreshSessions', 'killSessions', 'saslStart', 'saslContinue', 'authenticate', 'logout', 'getnonce',
  'createIndexes',
])
/** Commands known to change data that the journal cannot keep (replay would not repeat them). */
const UNJOURNALED_WRITES = new Set([
  'bulkWrite', 'create', 'drop', 'dropDatabase', 'dropIndexes', 'deleteIndexes', 'renameCollection', 'collMod', 'convertToCapped',
  'cloneCollectionAsCapped', 'mapReduce', 'applyOps', 'commitTransaction', 'abortTransaction', 'emptycapped', 'compact', 'reIndex',
])
/** Pipeline stages that write. */
const WRITING_STAGES = new Set(['$out', '$merge'])
const CUT_MARK = Buffer.from(CUT_COMMENT)
/** The error code of a refusal: MongoDB's CommandNotSupported, which no driver retries. */
const REFUSED_CODE = 115
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
  /** Handshakes sent: their replies lose `compression`. */
  hellos: Set<number>
  /** Refused for good: what it sends next is not read. */
  closing: boolean
  end(): void
}

type Verdict =
  | { kind: 'write' | 'cut'; coll: string }
  | { kind: 'hello' | 'pass' }
  /** `reply`: the kind of error reply the client reads; `close`: nothing more can be read from it. */
  | { kind: 'refuse'; why: string; reply: 'msg' | 'query' | 'none'; close?: boolean }

/** What to do with an OP_MSG: journal it, cut at it, pass it on, or refuse it. */
function classifyMsg(msg: Buffer, database: string | undefined): Verdict {
  const refuse = (why: string): Verdict => ({ kind: 'refuse', why, reply: 'msg' })
  const at = bodyAt(msg)
  if (at < 0) return refuse('an OP_MSG without a command')
  let els: Element[]
  try {
    els = elements(msg, at)
  } catch (err) {
    return refuse(`a command the journal cannot read (${(err as Error).message})`)
  }
  const first = els[0]
  if (!first) return refuse('an empty command')
  const name = first.name
  // A write in a transaction is acknowledged before it is committed, or never: not journaled.
  if (els.some((e) => e.name === 'autocommit' || e.name === 'startTransaction')) return refuse(`${name} in a transaction (transactions are not journaled)`)
  if (WRITE_COMMANDS.has(name)) {
    const coll = firstElement(msg)?.value
    if (!coll) return refuse(`${name} without a collection name`)
    // The snapshot and the replay keep one database: a write elsewhere would be lost at the next
    // start, or replayed into the wrong database. Refused, so the client knows at once.
    if (database !== undefined) {
      const db = databaseOf(msg, els)
      if (db !== database) return refuse(`${name} on database ${JSON.stringify(db)}: this store keeps database ${JSON.stringify(database)} (MONGO_DB) only`)
    }
    return { kind: 'write', coll }
  }
  if (HELLO.has(name)) return { kind: 'hello' }
  if (name === 'find') {
    // The bytes first (cheap); then the comment itself, not a filter that happens to hold them.
    if (msg.indexOf(CUT_MARK, 20) >= 0 && commentOf(msg) === CUT_COMMENT) {
      const coll = firstElement(msg)?.value
      if (coll) return { kind: 'cut', coll }
    }
    return { kind: 'pass' }
  }
  if (name === 'aggregate' && writesInPipeline(msg, els)) return refuse('aggregate with $out or $merge (it writes, and the journal cannot keep it)')
  if (name === 'explain') {
    const inner = first.type === 0x03 ? elements(msg, first.valueAt) : []
    const what = inner[0]?.name
    if (!what || !PASSED.has(what) || what === 'explain' || (what === 'aggregate' && writesInPipeline(msg, inner))) return refuse(`explain of ${what ?? 'nothing'}`)
    return { kind: 'pass' }
  }
  if (PASSED.has(name)) return { kind: 'pass' }
  if (UNJOURNALED_WRITES.has(name)) return refuse(`${name} changes data, and the journal cannot keep it`)
  return refuse(`${name} is not a command the journal knows (a read it passes on or a write it journals)`)
}

/** The command's `$db` (every OP_MSG names one), or null. */
function databaseOf(msg: Buffer, els: Element[]): string | null {
  const el = els.find((e) => e.name === '$db')
  return el && el.type === 0x02 ? msg.toString('utf8', el.valueAt + 4, el.end - 1) : null
}

/** An aggregate's pipeline holds a stage that writes. */
function writesInPipeline(msg: Buffer, els: Element[]): boolean {
  const pipeline = els.find((e) => e.name === 'pipeline')
  if (!pipeline || pipeline.type !== 0x04) return false
  return elements(msg, pipeline.valueAt).some((stage) => stage.type === 0x03 && elements(msg, stage.valueAt).some((e) => WRITING_STAGES.has(e.name)))
}

/**
 * `database`: the one database the store keeps (MONGO_DB); writes naming another are refused.
 * Left out, every database is journaled alike (the journal's own tests use one per test).
 */
export async function startJournalProxy(opts: { engineUrl: string; journal: Journal; database?: string }): Promise<JournalProxy> {
  const target = new URL(opts.engineUrl)
  const journal = opts.journal
  const conns = new Set<Conn>()
  /** Writes sent to the engine and not answered yet, per collection. */
  const inflight = new Map<string, number>()
  /** Collections whose snapshot read is being opened: their writes wait. */
  const cutting = new Set<string>()
  let cuts: Record<string, number> | null = null
  const lastWrites = new Map<string, number>()

  const classify = (msg: Buffer): Verdict => {
    try {
      return classifyAny(msg)
    } catch (err) {
      return { kind: 'refuse', why: `a message the journal cannot read (${(err as Error).message})`, reply: 'none', close: true }
    }
  }
  const classifyAny = (msg: Buffer): Verdict => {
    const h = header(msg)
    if (h.opCode === OP_MSG) return classifyMsg(msg, opts.database)
    if (h.opCode === OP_QUERY) {
      // Left in the protocol for the first handshake only.
      const { ns, docAt } = queryOf(msg)
      const first = elements(msg, docAt)[0]
      const inner = first?.name === '$query' && first.type === 0x03 ? elements(msg, first.valueAt)[0] : first
      if (ns.endsWith('.$cmd') && inner && HELLO.has(inner.name)) return { kind: 'hello' }
      return { kind: 'refuse', why: `a legacy OP_QUERY (${inner?.name ?? 'no command'} on ${ns}) other than the handshake`, reply: 'query' }
    }
    if (h.opCode === OP_COMPRESSED) {
      const original = msg.readInt32LE(16)
      return { kind: 'refuse', why: 'a compressed message (OP_COMPRESSED): the journal cannot read it', reply: original === OP_QUERY ? 'query' : original === OP_MSG ? 'msg' : 'none', close: true }
    }
    return { kind: 'refuse', why: `a message of op code ${h.opCode}, which the journal does not read`, reply: 'none', close: true }
  }

  /** Send what a connection has queued, in order, up to the first message that must wait. */
  const pump = (c: Conn): void => {
    const out: Buffer[] = []
    while (c.queue.length) {
      const msg = c.queue[0]!
      const what = classify(msg)
      if (what.kind === 'write') {
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
      } else if (what.kind === 'cut') {
        cutting.add(what.coll)
        if (inflight.get(what.coll)) break // sent once the writes under way are answered
        if (cuts) cuts[what.coll] = journal.lastSeq
        c.cutFinds.set(header(msg).requestId, what.coll)
      } else if (what.kind === 'hello') {
        c.hellos.add(header(msg).requestId)
      } else if (what.kind === 'refuse') {
        c.queue.shift()
        if (out.length) c.upstream.write(out.length === 1 ? out[0]! : Buffer.concat(out))
        refuse(c, msg, what)
        return
      }
      out.push(msg)
      c.queue.shift()
    }
    if (out.length) c.upstream.write(out.length === 1 ? out[0]! : Buffer.concat(out))
  }

  /** Answer a message the journal cannot keep with an error (never the engine's), and say so in the log. */
  const refuse = (c: Conn, msg: Buffer, why: Extract<Verdict, { kind: 'refuse' }>): void => {
    const h = header(msg)
    const unanswered = h.opCode === OP_MSG && (flags(msg) & MORE_TO_COME) !== 0
    logger.warn({ why: why.why, requestId: h.requestId }, 'the embedded store refused a message its write journal cannot keep: an error went back to the client, the engine never saw it')
    const errmsg = `refused by the embedded store's write journal: ${why.why} (docs/embedded-store.md, "The write journal")`
    const doc = { ok: 0, errmsg, code: REFUSED_CODE, codeName: 'CommandNotSupported' }
    if (!unanswered && why.reply === 'msg') c.client.write(opMsgReply(0, h.requestId, doc))
    else if (!unanswered && why.reply === 'query') c.client.write(opReply(0, h.requestId, { ...doc, $err: errmsg }))
    // Nobody waits for an answer, or whatever comes next cannot be read either: the connection ends.
    if (unanswered || why.close) {
      c.closing = true
      c.queue = []
      c.client.end(() => c.end())
    } else if (c.queue.length) pump(c)
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
    for (const [i, msg] of msgs.entries()) {
      const to = header(msg).responseTo
      if (c.hellos.delete(to)) {
        // No client may compress: the proxy could not read what it sends (wire.ts).
        msgs[i] = replyWithout(msg, 'compression')
        continue
      }
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
    const c: Conn = { client, upstream, queue: [], writes: new Map(), cutFinds: new Map(), hellos: new Set(), closing: false, end: () => end() }
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
      if (c.closing) return
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
      c.hellos.clear()
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
