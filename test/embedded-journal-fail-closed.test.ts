// The journal's proxy (src/embedded/journal-proxy.ts) fails closed: a driver configured
// to compress (`compressors: ['zlib']`) never does, even in front of an engine that would agree
// (the handshake's answer loses its `compression`), so its writes are journaled and replay; a
// compressed message sent anyway, a write in a transaction, or a command that writes (or that the
// proxy does not know) gets an error reply and a log line, and never reaches the engine. Reads and
// the journaled writes go on on the same connections.
import assert from 'node:assert/strict'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync, inflateSync } from 'node:zlib'
import { BSON, MongoClient, MongoServerError, type Document } from 'mongodb'
import { Journal } from '../src/embedded/journal.ts'
import { inspectJournal } from '../src/embedded/journal-recovery.ts'
import { startJournalProxy, type JournalProxy } from '../src/embedded/journal-proxy.ts'
import { replayJournal } from '../src/embedded/journal-replay.ts'
import { MessageFramer, OP_MSG, OP_REPLY, header, replyOf } from '../src/embedded/wire.ts'
import { logger } from '../src/platform/logger.ts'

/**
 * An engine that agrees to compression: a relay in front of the real one that adds
 * `compression: ['zlib']` to every handshake answer, and counts compressed messages sent to it.
 */
async function agreeingEngine(engineUrl: string): Promise<{ url: string; compressed: () => number; close(): Promise<void> }> {
  const target = new URL(engineUrl)
  let compressed = 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect({ host: target.hostname, port: Number(target.port) })
    sockets.add(client).add(upstream)
    const up = new MessageFramer()
    const down = new MessageFramer()
    client.on('data', (b: Buffer) => {
      for (const m of up.push(b)) {
        if (header(m).opCode !== 2012) {
          upstream.write(m)
          continue
        }
        // The engine itself reads no compression: the relay opens the message for it.
        compressed++
        const plain = Buffer.concat([m.subarray(0, 16), inflateSync(m.subarray(25))])
        plain.writeInt32LE(plain.length, 0)
        plain.writeInt32LE(m.readInt32LE(16), 12)
        upstream.write(plain)
      }
    })
    upstream.on('data', (b: Buffer) => {
      for (const m of down.push(b)) client.write(agree(m))
    })
    const end = () => (client.destroy(), upstream.destroy())
    for (const s of [client, upstream]) s.on('error', end).on('close', end)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const url = new URL(engineUrl)
  url.port = String((server.address() as { port: number }).port)
  return {
    url: url.toString(),
    compressed: () => compressed,
    close: () => new Promise<void>((r) => (server.close(() => r()), sockets.forEach((s) => s.destroy()))),
  }
}

function agree(m: Buffer): Buffer {
  const h = header(m)
  const rebuild = (doc: Document, opCode: number, prefix: Buffer) => {
    const body = Buffer.from(BSON.serialize({ ...doc, compression: ['zlib'] }))
    const out = Buffer.concat([m.subarray(0, 16), prefix, body])
    out.writeInt32LE(out.length, 0)
    out.writeInt32LE(opCode, 12)
    return out
  }
  if (h.opCode === OP_REPLY) return rebuild(BSON.deserialize(m.subarray(36)), OP_REPLY, m.subarray(16, 36))
  if (h.opCode === OP_MSG) {
    const doc = replyOf(m)
    if ('isWritablePrimary' in doc || 'ismaster' in doc) return rebuild(doc, OP_MSG, Buffer.from([0, 0, 0, 0, 0]))
  }
  return m
}

describe('embedded store: the journal proxy fails closed', function () {
  this.timeout(60_000)
  const id = () => Math.random().toString(36).slice(2, 8)
  let root: string
  let direct: MongoClient
  let relay: Awaited<ReturnType<typeof agreeingEngine>>
  let journal: Journal
  let proxy: JournalProxy
  let dir: string
  const warnings: string[] = []
  const warn = logger.warn

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'qw-journal-closed-'))
    direct = await new MongoClient(process.env.TEST_MONGO_URL!).connect()
    relay = await agreeingEngine(process.env.TEST_MONGO_URL!)
    dir = join(root, 'data')
    journal = new Journal(dir, 0)
    proxy = await startJournalProxy({ engineUrl: relay.url, journal })
    // The proxy's log lines, read as they are written (the test run's logger is silent).
    logger.warn = ((obj: unknown, msg?: string) => void warnings.push(`${JSON.stringify(obj)} ${msg ?? ''}`)) as typeof logger.warn
  })
  after(async () => {
    logger.warn = warn
    await proxy?.close()
    journal?.close()
    await relay?.close()
    await direct?.close()
    rmSync(root, { recursive: true, force: true })
  })

  it('a driver configured for compression writes uncompressed through it, even to an engine that agrees; its writes are journaled and replay', async () => {
    // Such an engine does agree: a driver straight to it compresses.
    const other = await agreeingEngine(process.env.TEST_MONGO_URL!)
    const straight = await new MongoClient(other.url, { compressors: ['zlib'] }).connect()
    await straight.db('admin').command({ ping: 1 })
    await straight.close()
    await other.close()
    assert.ok(other.compressed() > 0, 'an engine that agrees gets compressed messages')

    const client = await new MongoClient(proxy.url, { compressors: ['zlib'], zlibCompressionLevel: 9, maxPoolSize: 4 }).connect()
    const dbName = `closed_zlib_${id()}`
    const t = client.db(dbName).collection<Document>('t')
    await t.insertOne({ _id: 1 as never, body: 'x'.repeat(50_000) })
    await t.insertMany([{ _id: 2 }, { _id: 3 }] as never)
    await t.updateOne({ _id: 2 as never }, { $inc: { n: 5 } })
    await t.deleteOne({ _id: 3 as never })
    await t.findOneAndUpdate({ _id: 4 as never }, { $set: { v: 'up' } }, { upsert: true })
    assert.equal(await t.countDocuments(), 3)
    await client.close()
    assert.equal(relay.compressed(), 0, 'nothing compressed went through the proxy')
    assert.deepEqual(warnings.filter((w) => /compressed/.test(w)), [])

    // A kill leaves what the journal holds: replayed into a fresh database, the same documents.
    journal.flushSync()
    const { records, damaged, torn } = inspectJournal(dir)
    assert.deepEqual([damaged.length, torn.length], [0, 0])
    const into = direct.db(`closed_zlib_replayed_${id()}`)
    await replayJournal(into, records.filter((r) => r.m.includes(Buffer.from(dbName))), null)
    const live = await direct.db(dbName).collection('t').find({}).sort({ _id: 1 }).toArray()
    assert.deepEqual(await into.collection('t').find({}).sort({ _id: 1 }).toArray(), live)
    assert.equal(live.length, 3)
  })

  it('a compressed message sent anyway: an error reply, a log line, the connection closed, nothing written', async () => {
    const dbName = `closed_raw_${id()}`
    const insert = Buffer.concat([Buffer.alloc(4), Buffer.from([0]), Buffer.from(BSON.serialize({ insert: 't', documents: [{ _id: 'sneaked' }], $db: dbName }))])
    const zipped = deflateSync(insert)
    const msg = Buffer.alloc(16 + 9 + zipped.length)
    msg.writeInt32LE(msg.length, 0)
    msg.writeInt32LE(77, 4)
    msg.writeInt32LE(2012, 12)
    msg.writeInt32LE(OP_MSG, 16)
    msg.writeInt32LE(insert.length, 20)
    msg[24] = 2 // zlib
    zipped.copy(msg, 25)
    const url = new URL(proxy.url)
    const sock = connect({ host: url.hostname, port: Number(url.port) })
    const framer = new MessageFramer()
    const replies: Buffer[] = []
    sock.on('data', (b: Buffer) => replies.push(...framer.push(b)))
    const closed = new Promise<void>((r) => sock.once('close', () => r()))
    await new Promise<void>((r, j) => sock.once('connect', r).once('error', j))
    const records = inspectJournal(dir).records.length
    sock.write(msg)
    await closed
    assert.equal(replies.length, 1)
    assert.equal(header(replies[0]!).responseTo, 77)
    const reply = replyOf(replies[0]!)
    assert.equal(reply.ok, 0)
    assert.match(reply.errmsg, /refused by the embedded store's write journal: a compressed message \(OP_COMPRESSED\)/)
    assert.ok(warnings.some((w) => w.includes('a compressed message (OP_COMPRESSED)') && w.includes('refused a message its write journal cannot keep')))
    assert.equal(await direct.db(dbName).collection('t').countDocuments(), 0)
    assert.equal(inspectJournal(dir).records.length, records)
  })

  it('writes it cannot journal, and commands it does not know, are refused before the engine; reads and journaled writes go on', async () => {
    const client = await new MongoClient(proxy.url, { maxPoolSize: 2 }).connect()
    const dbName = `closed_cmds_${id()}`
    const db = client.db(dbName)
    await db.collection('t').insertMany([{ _id: 1, k: 'a' }, { _id: 2, k: 'b' }] as never)
    const journaledBefore = inspectJournal(dir).records.length
    const refusals: [string, () => Promise<unknown>, RegExp][] = [
      ['drop', () => db.command({ drop: 't' }), /drop changes data, and the journal cannot keep it/],
      ['dropDatabase', () => db.command({ dropDatabase: 1 }), /dropDatabase changes data/],
      ['create', () => db.command({ create: 'made' }), /create changes data/],
      ['renameCollection', () => client.db('admin').command({ renameCollection: `${dbName}.t`, to: `${dbName}.u` }), /renameCollection changes data/],
      ['collMod', () => db.command({ collMod: 't', validator: {} }), /collMod changes data/],
      ['bulkWrite', () => client.db('admin').command({ bulkWrite: 1, ops: [{ insert: 0, document: { _id: 9 } }], nsInfo: [{ ns: `${dbName}.t` }] }), /bulkWrite changes data/],
      ['$out', () => db.collection('t').aggregate([{ $match: {} }, { $out: 'copy' }]).toArray(), /aggregate with \$out or \$merge/],
      ['$merge', () => db.collection('t').aggregate([{ $merge: { into: 'copy' } }]).toArray(), /aggregate with \$out or \$merge/],
      ['unknown', () => db.command({ frobnicate: 't', documents: [{ _id: 10 }] }), /frobnicate is not a command the journal knows/],
      ['INSERT', () => db.command({ INSERT: 't', documents: [{ _id: 11 }] }), /INSERT is not a command the journal knows/],
      ['explain of a write', () => db.command({ explain: { update: 't', updates: [{ q: {}, u: { $set: { x: 1 } } }] } }), /explain of update/],
      [
        'transaction',
        async () => {
          const session = client.startSession()
          try {
            session.startTransaction()
            await db.collection('t').insertOne({ _id: 12 } as never, { session })
            await session.commitTransaction()
          } finally {
            await session.endSession()
          }
        },
        /insert in a transaction \(transactions are not journaled\)/,
      ],
    ]
    for (const [what, call, message] of refusals) {
      const before = warnings.length
      await assert.rejects(call(), (err: Error) => {
        assert.ok(err instanceof MongoServerError, `${what}: ${String(err)}`)
        assert.equal(err.code, 115, what)
        assert.match(err.message, /^refused by the embedded store's write journal: /, what)
        assert.match(err.message, message, what)
        return true
      })
      assert.ok(warnings.slice(before).some((w) => message.test(w)), `${what}: a log line`)
    }
    // Nothing of it reached the engine; reads and journaled writes still work on the same pool.
    for (const other of ['made', 'u', 'copy']) assert.equal(await direct.db(dbName).collection(other).countDocuments(), 0, other)
    assert.deepEqual((await db.collection('t').find({}).sort({ _id: 1 }).toArray()).map((d) => d._id), [1, 2])
    assert.equal(await db.collection('t').countDocuments({ k: 'a' }), 1)
    assert.equal(await db.collection('t').estimatedDocumentCount(), 2)
    assert.deepEqual((await db.collection('t').distinct('k')).sort(), ['a', 'b'])
    assert.deepEqual((await db.collection('t').aggregate([{ $group: { _id: null, n: { $sum: 1 } } }]).toArray())[0]?.n, 2)
    await db.collection('t').createIndex({ k: 1 })
    await db.collection('t').updateOne({ _id: 1 as never }, { $set: { after: true } })
    assert.equal(inspectJournal(dir).records.length, journaledBefore + 1, 'only the update after them was journaled')
    await client.close()
  })
  it('a store that keeps one database refuses writes naming another (they could not be restored); its own database and reads elsewhere go on', async () => {
    const keptDir = join(root, 'one-db')
    const keptJournal = new Journal(keptDir, 0)
    const kept = `kept_${id()}`
    const other = `other_${id()}`
    const oneDb = await startJournalProxy({ engineUrl: relay.url, journal: keptJournal, database: kept })
    const client = await new MongoClient(oneDb.url, { maxPoolSize: 2 }).connect()
    try {
      await client.db(kept).collection('t').insertOne({ _id: 1 } as never)
      const writes: [string, () => Promise<unknown>][] = [
        ['insert', () => client.db(other).collection('t').insertOne({ _id: 1 } as never)],
        ['update', () => client.db(other).collection('t').updateOne({ _id: 1 as never }, { $set: { x: 1 } }, { upsert: true })],
        ['delete', () => client.db(other).collection('t').deleteMany({})],
        ['findAndModify', () => client.db(other).collection('t').findOneAndUpdate({ _id: 2 as never }, { $set: { x: 1 } }, { upsert: true })],
      ]
      for (const [what, call] of writes) {
        await assert.rejects(call(), (err: Error) => {
          assert.ok(err instanceof MongoServerError, `${what}: ${String(err)}`)
          assert.match(err.message, new RegExp(`^refused by the embedded store's write journal: ${what} on database "${other}": this store keeps database "${kept}" \\(MONGO_DB\\) only`), what)
          return true
        })
      }
      assert.equal(await direct.db(other).collection('t').countDocuments(), 0, 'nothing reached the engine')
      assert.deepEqual(await client.db(other).collection('t').find({}).toArray(), [], 'reads of another database go on')
      await client.db(kept).collection('t').updateOne({ _id: 1 as never }, { $set: { after: true } })
      const records = inspectJournal(keptDir).records
      assert.equal(records.length, 2, 'the two writes to the kept database, and nothing else, were journaled')
    } finally {
      await client.close()
      await oneDb.close()
      keptJournal.close()
    }
  })
})
