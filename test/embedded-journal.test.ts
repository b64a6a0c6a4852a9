// The embedded store's write journal (src/embedded/journal*.ts) against the real engine,
// through the real proxy: every kind of write the driver sends is journaled once acknowledged and
// replays to the same documents (upserts get the _id they got, failed statements stay out); a
// record torn by a crash mid-append is left out, not fatal; and a snapshot taken while writers
// run, with the journal replayed over it past each collection's cut, is exactly the live store
// (no $inc applied twice, nothing missing), also when the snapshot takes clean collections over.
import assert from 'node:assert/strict'
import { connect } from 'node:net'
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MongoClient, ObjectId, type Db, type Document } from 'mongodb'
import { Journal, JOURNAL_DIR } from '../src/embedded/journal.ts'
import { inspectJournal as readJournal } from '../src/embedded/journal-recovery.ts'
import { startJournalProxy, type JournalProxy } from '../src/embedded/journal-proxy.ts'
import { replayJournal } from '../src/embedded/journal-replay.ts'
import { readSnapshot, restoreSnapshot, reuseFrom, writeSnapshot } from '../src/embedded/snapshot.ts'

const sortById = (docs: Document[]) => docs.sort((a, b) => String(a._id).localeCompare(String(b._id)))

async function dump(db: Db, names: string[]): Promise<Record<string, Document[]>> {
  const out: Record<string, Document[]> = {}
  for (const n of names) out[n] = sortById(await db.collection(n).find({}).toArray())
  return out
}

describe('embedded store: the write journal', function () {
  this.timeout(60_000)
  const id = () => Math.random().toString(36).slice(2, 8)
  let root: string
  let direct: MongoClient
  const opened: { proxy: JournalProxy; journal: Journal; client: MongoClient }[] = []

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'qw-journal-test-'))
    direct = await new MongoClient(process.env.TEST_MONGO_URL!).connect()
  })
  after(async () => {
    for (const o of opened) {
      await o.client.close()
      await o.proxy.close()
      o.journal.close()
    }
    await direct?.close()
    rmSync(root, { recursive: true, force: true })
  })

  /** A data folder with a journal, and a client that reaches the engine through the proxy. */
  async function journaled(): Promise<{ dir: string; journal: Journal; proxy: JournalProxy; client: MongoClient }> {
    const dir = join(root, id())
    const journal = new Journal(dir, 0)
    const proxy = await startJournalProxy({ engineUrl: process.env.TEST_MONGO_URL!, journal })
    const client = await new MongoClient(proxy.url, { maxPoolSize: 8 }).connect()
    opened.push({ proxy, journal, client })
    return { dir, journal, proxy, client }
  }

  it('journals every kind of write once acknowledged, and replays them to the same documents', async () => {
    const { dir, journal, client } = await journaled()
    const db = client.db(`journal_kinds_${id()}`)
    const a = db.collection('a')
    const b = db.collection('b')
    await a.insertOne({ _id: 'one' as never, n: 1 })
    await a.insertMany([{ _id: 'two', n: 2 }, { _id: 'three', n: 3 }] as never)
    await a.updateOne({ _id: 'one' as never }, { $inc: { n: 10 }, $set: { log: 'inc' }, $unset: { gone: '' } } as never)
    await a.updateMany({ n: { $gte: 2 } }, { $set: { big: true } })
    await a.replaceOne({ _id: 'two' as never }, { n: 22, replaced: true })
    await a.deleteOne({ _id: 'three' as never })
    // Upserts without an _id in the filter: the engine picks one, and replay must pick the same.
    const up = await b.updateOne({ key: 'x' }, { $inc: { hits: 1 } }, { upsert: true })
    const fam = await b.findOneAndUpdate({ key: 'y' }, { $set: { v: 'y' } }, { upsert: true, returnDocument: 'after' })
    await b.bulkWrite([
      { insertOne: { document: { _id: new ObjectId(), key: 'z' } } },
      { updateOne: { filter: { key: 'x' }, update: { $inc: { hits: 5 } } } },
      { deleteMany: { filter: { key: 'nothing' } } },
    ])
    // A batch with a duplicate: whatever the engine kept of it, replay keeps the same (the
    // engine refuses such a batch whole; MongoDB would keep the statements without writeErrors).
    await assert.rejects(b.insertMany([{ _id: 'd1', v: 1 }, { _id: 'd1', v: 2 }, { _id: 'd2', v: 3 }] as never, { ordered: false }))
    await assert.rejects(b.insertMany([{ _id: 'o1', v: 1 }, { _id: 'o1', v: 2 }, { _id: 'o2', v: 3 }] as never, { ordered: true }))
    // Reads and failed writes are not journaled.
    await a.find({}).toArray()
    await assert.rejects(a.insertOne({ _id: 'one' as never, n: 0 }))

    const live = await dump(db, ['a', 'b'])
    assert.equal(live.b!.find((d) => d.key === 'x')!._id.toString(), up.upsertedId!.toString())
    assert.ok(fam?._id instanceof ObjectId)
    const kept = live.b!.filter((d) => typeof d._id === 'string').length

    journal.flushSync()
    const { records, torn } = readJournal(dir)
    assert.deepEqual(torn, [])
    // One record per acknowledged write command (the bulkWrite sends three): 11, and the batches if the engine wrote any of them.
    const expected = 11 + (kept ? 2 : 0)
    assert.equal(records.length, expected)
    assert.deepEqual(records.map((r) => r.s), Array.from({ length: expected }, (_, i) => i + 1))

    const into = direct.db(`journal_kinds_replayed_${id()}`)
    const r = await replayJournal(into, records, null)
    assert.equal(r.applied, expected)
    assert.equal(r.differed, 0)
    assert.deepEqual(await dump(into, ['a', 'b']), live)
  })

  it('a connection that breaks the wire protocol is closed; the proxy and its other clients go on', async () => {
    const { proxy, client } = await journaled()
    const db = client.db(`journal_garbage_${id()}`)
    await db.collection('t').insertOne({ _id: 1 as never })
    const url = new URL(proxy.url)
    const sock = connect({ host: url.hostname, port: Number(url.port) })
    await new Promise<void>((r, j) => sock.once('connect', r).once('error', j))
    const closed = new Promise<void>((r) => sock.once('close', () => r()))
    // A message whose length field says 0: smaller than any header.
    sock.write(Buffer.alloc(16))
    await closed
    await db.collection('t').insertOne({ _id: 2 as never })
    assert.deepEqual((await db.collection('t').find({}).toArray()).map((d) => d._id), [1, 2])
  })

  it('a record torn by a crash mid-append is left out; the whole ones before it replay', async () => {
    const { dir, journal, client } = await journaled()
    const db = client.db(`journal_torn_${id()}`)
    for (let i = 1; i <= 5; i++) await db.collection('t').insertOne({ _id: i as never })
    journal.flushSync()
    const seg = join(dir, JOURNAL_DIR, readdirSync(join(dir, JOURNAL_DIR))[0]!)
    // A record's frame that says 200 bytes follow, and 3 of them: the process died mid-write.
    const frame = Buffer.alloc(11)
    frame.writeUInt32LE(200, 0)
    appendFileSync(seg, frame)
    const { records, torn } = readJournal(dir)
    assert.equal(records.length, 5)
    assert.equal(torn.length, 1)
    const into = direct.db(`journal_torn_replayed_${id()}`)
    await replayJournal(into, records, null)
    assert.deepEqual((await into.collection('t').find({}).toArray()).map((d) => d._id), [1, 2, 3, 4, 5])
  })

  it('a snapshot taken while writers run, with the journal replayed past its cuts, is exactly the live store; clean collections are taken over', async () => {
    const { dir, journal, proxy, client } = await journaled()
    const db = client.db(`journal_cut_${id()}`)
    const names = ['counters', 'items', 'idle']
    await db.collection('idle').insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, v: 'idle' })) as never)
    await db.collection('counters').insertOne({ _id: 'c' as never, n: 0 })

    // First snapshot (everything read), then writers run through a second one that takes `idle` over.
    const first = join(dir, 'snapshot')
    proxy.beginCuts()
    await writeSnapshot(db, names, first)
    const firstCuts = proxy.endCuts()
    assert.deepEqual(Object.keys(firstCuts).sort(), names.slice().sort())

    let stop = false
    let acked = 0
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        await db.collection('counters').updateOne({ _id: 'c' as never }, { $inc: { n: 1 } })
        await db.collection('items').insertOne({ _id: `${w}-${i}` as never, w })
        acked++
      }
    }
    const writers = [0, 1, 2, 3].map(writer)
    while (acked < 40) await new Promise((r) => setTimeout(r, 5))
    const segment = journal.rotate()
    proxy.beginCuts()
    const clean = ['idle'].filter((c) => proxy.lastWrite(c) <= firstCuts[c]!)
    assert.deepEqual(clean, ['idle'])
    const second = join(dir, 'snapshot.new')
    await writeSnapshot(db, names, second, () => 0.5, await reuseFrom(second, clean))
    const cuts = { idle: firstCuts.idle!, ...proxy.endCuts() }
    const atCut = acked
    while (acked < atCut + 40) await new Promise((r) => setTimeout(r, 5))
    stop = true
    await Promise.all(writers)
    journal.flushSync()
    journal.dropBefore(segment)

    const live = await dump(db, names)
    assert.ok((live.counters![0]!.n as number) >= 80)
    const into = direct.db(`journal_cut_restored_${id()}`)
    await restoreSnapshot(into, await readSnapshot(second))
    const { records } = readJournal(dir)
    const r = await replayJournal(into, records, cuts)
    assert.ok(r.skipped > 0, 'records the snapshot held were skipped')
    assert.ok(r.applied >= 80, `writes after the cuts were replayed (${r.applied})`)
    assert.deepEqual(await dump(into, names), live)
  })
})
