// Damage to the embedded store's write journal on disk (src/embedded/journal*.ts). A
// journal of 12 acknowledged inserts (records 1–12) is written through the real proxy into a data
// folder and left as a killed process leaves it (every append is a synchronous write: the bytes
// on disk are the same); then one byte of record 6 is changed in each of its fields, its length
// set to 4 GB, its payload replaced by one that is not BSON, the damage put in an earlier segment
// or at its end. Each time: recovery refuses by default with a message naming the file, the bytes
// and record 6; accepting the loss replays exactly records 1–5 and 7–12, keeps the damaged segment
// aside as found, and the next read of the journal is clean. A genuinely torn last record is still
// left out with a warning only. And with the real kept store: a snapshot after the accepted damage
// leaves the copy aside, and a restart has exactly what survived.
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import { BSON, MongoClient } from 'mongodb'
import { Journal, JOURNAL_DIR, scanSegment, segmentName } from '../src/embedded/journal.ts'
import { DAMAGED_DIR, JournalDamageError, inspectJournal, recoverJournal } from '../src/embedded/journal-recovery.ts'
import { startJournalProxy } from '../src/embedded/journal-proxy.ts'
import { replayJournal } from '../src/embedded/journal-replay.ts'
import { openDataFolder, releaseLock } from '../src/embedded/data-folder.ts'
import { keepStore } from '../src/embedded/kept-store.ts'
import { startMongoEngine } from '../src/embedded/mongo-engine.ts'

const ALL = Array.from({ length: 12 }, (_, i) => i + 1)
const without = (n: number[], from = ALL) => from.filter((x) => !n.includes(x))

describe('embedded store: damage to the write journal', function () {
  this.timeout(120_000)
  const id = () => Math.random().toString(36).slice(2, 8)
  let root: string
  let direct: MongoClient
  /** Folders as a kill leaves them: one segment of records 1–12; two segments, 1–12 and 13–20. */
  let oneSegment: string
  let twoSegments: string
  const closers: (() => Promise<void> | void)[] = []

  /** A data folder whose journal holds the inserts {_id: n} of `batches`, a new segment per batch. */
  async function journaled(batches: number[][]): Promise<string> {
    const dir = join(root, `base-${id()}`)
    await releaseLock((await openDataFolder(dir)).dir)
    const journal = new Journal(dir, 0)
    const proxy = await startJournalProxy({ engineUrl: process.env.TEST_MONGO_URL!, journal })
    const client = await new MongoClient(proxy.url).connect()
    const coll = client.db(`damage_src_${id()}`).collection<{ _id: number }>('t')
    for (const [i, batch] of batches.entries()) {
      if (i) journal.rotate()
      for (const n of batch) await coll.insertOne({ _id: n })
    }
    closers.push(() => client.close(), () => proxy.close(), () => journal.close())
    return dir
  }

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'qw-journal-damage-'))
    direct = await new MongoClient(process.env.TEST_MONGO_URL!).connect()
    oneSegment = await journaled([ALL])
    twoSegments = await journaled([ALL, Array.from({ length: 8 }, (_, i) => i + 13)])
  })
  after(async () => {
    for (const c of closers) await c()
    await direct?.close()
    rmSync(root, { recursive: true, force: true })
  })

  const copy = (from: string) => {
    const to = join(root, `case-${id()}`)
    cpSync(from, to, { recursive: true })
    return to
  }
  const segFile = (dir: string, n = 1) => join(dir, JOURNAL_DIR, segmentName(n))
  /** Record `s` of a segment: its frame's offset and length, found in the undamaged bytes. */
  const place = (file: string, s: number) => {
    const rec = scanSegment(readFileSync(file)).records.find((r) => r.s === s)!
    return { at: rec.at, len: rec.end - rec.at - 8 }
  }
  const edit = (file: string, change: (b: Buffer) => Buffer | void) => {
    const b = readFileSync(file)
    writeFileSync(file, change(b) ?? b)
  }

  /** Recover (accepting or not) and replay into a fresh database: the _ids that came back. */
  async function survivors(dir: string, accept: boolean): Promise<number[]> {
    const { records } = recoverJournal(dir, { accept })
    const db = direct.db(`damage_replayed_${id()}`)
    await replayJournal(db, records, null)
    return (await db.collection<{ _id: number }>('t').find({}).toArray()).map((d) => d._id).sort((a, b) => a - b)
  }

  /** The whole check of one damaged folder: refused, then accepted with exactly `expected` back. */
  async function refusedThenAccepted(dir: string, expected: number[], lostMessage: RegExp, segment = 1): Promise<void> {
    const damagedBytes = readFileSync(segFile(dir, segment))
    assert.throws(
      () => recoverJournal(dir, { accept: false }),
      (err: Error) => {
        assert.ok(err instanceof JournalDamageError, String(err))
        assert.ok(err.message.includes(segFile(dir, segment)), err.message)
        assert.match(err.message, lostMessage)
        assert.match(err.message, /JOURNAL_ACCEPT_DAMAGE=true \(or run start --accept-journal-damage\)/)
        return true
      },
    )
    assert.deepEqual(readFileSync(segFile(dir, segment)), damagedBytes, 'a refusal changes nothing on disk')
    assert.deepEqual(await survivors(dir, true), expected)
    // Kept aside as found; the segment itself now holds its whole records only.
    const aside = readdirSync(join(dir, DAMAGED_DIR))
    assert.equal(aside.length, 1)
    assert.match(aside[0]!, new RegExp(`^${segmentName(segment).replace('.log', '')}-.*\\.log$`))
    assert.deepEqual(readFileSync(join(dir, DAMAGED_DIR, aside[0]!)), damagedBytes)
    const again = inspectJournal(dir)
    assert.deepEqual([again.damaged.length, again.torn.length], [0, 0])
    assert.deepEqual(await survivors(dir, false), expected, 'the next start reads the rest without a word')
  }

  it('one byte of the length field changed: records 7–12 are found again, record 6 alone is lost', async () => {
    for (const [byte, xor] of [[0, 0x01], [1, 0xff], [3, 0x80]] as const) {
      const dir = copy(oneSegment)
      const { at } = place(segFile(dir), 6)
      edit(segFile(dir), (b) => void (b[at + byte]! ^= xor))
      await refusedThenAccepted(dir, without([6]), /bytes \d+–\d+: .*; record 6 lost \(the whole record before is 5, the next is 7\)/)
    }
  })

  it('the length field set to 4 GB', async () => {
    const dir = copy(oneSegment)
    const { at } = place(segFile(dir), 6)
    edit(segFile(dir), (b) => void b.writeUInt32LE(0xffffffff, at))
    await refusedThenAccepted(dir, without([6]), /its length field says 4294967295 bytes follow, but only \d+ do; record 6 lost/)
  })

  it('one byte of the CRC changed', async () => {
    const dir = copy(oneSegment)
    const { at } = place(segFile(dir), 6)
    edit(segFile(dir), (b) => void (b[at + 5]! ^= 0x10))
    await refusedThenAccepted(dir, without([6]), /it fails its CRC-32 check .*; record 6 lost/)
  })

  it('one byte of the payload changed: its BSON length, its sequence number, its command', async () => {
    for (const offset of [0, 12, -20]) {
      const dir = copy(oneSegment)
      const { at, len } = place(segFile(dir), 6)
      edit(segFile(dir), (b) => void (b[at + 8 + (offset >= 0 ? offset : len + offset)]! ^= 0x04))
      await refusedThenAccepted(dir, without([6]), /it fails its CRC-32 check .*; record 6 lost/)
    }
  })

  it('a valid frame and CRC around a payload that is not BSON, or BSON that is not a record', async () => {
    for (const payload of [Buffer.from('not bson at all, 29 bytes lng'), Buffer.from(BSON.serialize({ hello: 'world' }))]) {
      const dir = copy(oneSegment)
      const { at, len } = place(segFile(dir), 6)
      const frame = Buffer.alloc(8)
      frame.writeUInt32LE(payload.length, 0)
      frame.writeUInt32LE(crc32(payload), 4)
      edit(segFile(dir), (b) => Buffer.concat([b.subarray(0, at), frame, payload, b.subarray(at + 8 + len)]))
      await refusedThenAccepted(dir, without([6]), /its frame and CRC are valid, but its payload is not a journal record .*; record 6 lost/)
    }
  })

  it('damage in an earlier segment: in its middle, or its last record (the numbering of the next segment shows the gap)', async () => {
    const all20 = Array.from({ length: 20 }, (_, i) => i + 1)
    let dir = copy(twoSegments)
    const six = place(segFile(dir), 6)
    edit(segFile(dir), (b) => void (b[six.at + 8 + 30]! ^= 0x01))
    await refusedThenAccepted(dir, without([6], all20), /record 6 lost/)

    dir = copy(twoSegments)
    const twelve = place(segFile(dir), 12)
    edit(segFile(dir), (b) => void (b[twelve.at + 8 + 30]! ^= 0x01))
    await refusedThenAccepted(dir, without([12], all20), /record 12 lost \(the whole record before is 11, the next is 13\)/)
  })

  it('a torn last record (a crash mid-append) is left out with a warning only, also when a later run wrote a segment after it', async () => {
    const dir = copy(oneSegment)
    const { at } = place(segFile(dir), 12)
    truncateSync(segFile(dir), at + 20)
    assert.deepEqual(await survivors(dir, false), without([12]))
    const read = inspectJournal(dir)
    assert.equal(read.torn.length, 1)
    assert.match(read.torn[0]!.reason, /but only 12 do/)
    // The next run numbers on from record 11: the torn record's number is taken again, no gap.
    const journal = new Journal(dir, 11)
    const proxy = await startJournalProxy({ engineUrl: process.env.TEST_MONGO_URL!, journal })
    const client = await new MongoClient(proxy.url).connect()
    for (const n of [12, 13, 14]) await client.db(`damage_next_${id()}`).collection<{ _id: number }>('t').insertOne({ _id: n })
    await client.close()
    await proxy.close()
    journal.close()
    assert.deepEqual(await survivors(dir, false), [...without([12]), 12, 13, 14])
    assert.equal(readdirSync(dir).includes(DAMAGED_DIR), false, 'nothing was set aside')
  })

  it('damage followed by a snapshot: the kept store refuses, then accepts; the snapshot drops the segment, the copy aside stays; a restart has exactly what survived', async () => {
    const dir = copy(oneSegment)
    const six = place(segFile(dir), 6)
    edit(segFile(dir), (b) => void (b[six.at + 8 + 30]! ^= 0x01))
    const damagedBytes = readFileSync(segFile(dir))
    const known = { partitioned: [], plain: ['t'] }
    const database = `damage_kept_${id()}`
    const run = async (accept: boolean, work: (url: string, kept: Awaited<ReturnType<typeof keepStore>>) => Promise<void>) => {
      const engine = await startMongoEngine()
      try {
        const folder = await openDataFolder(dir)
        let kept
        try {
          kept = await keepStore({ folder, mongoUrl: engine.url, database, known, intervalMs: 3_600_000, childPids: [], acceptJournalDamage: accept })
        } catch (err) {
          await releaseLock(folder.dir)
          throw err
        }
        try {
          await work(kept.url, kept)
        } finally {
          await kept.close()
        }
      } finally {
        await engine.child.stop()
      }
    }
    const ids = async (url: string) => {
      const c = await new MongoClient(url).connect()
      try {
        return (await c.db(database).collection<{ _id: number }>('t').find({}).toArray()).map((d) => d._id).sort((a, b) => a - b)
      } finally {
        await c.close()
      }
    }
    await assert.rejects(run(false, async () => undefined), /record 6 lost/)
    await run(true, async (url, kept) => {
      assert.deepEqual(await ids(url), without([6]))
      await kept.snapshot()
      assert.equal(readdirSync(join(dir, JOURNAL_DIR)).includes(segmentName(1)), false, 'the snapshot dropped the old segment')
      const c = await new MongoClient(url).connect()
      await c.db(database).collection<{ _id: number }>('t').insertOne({ _id: 13 })
      await c.close()
    })
    const aside = readdirSync(join(dir, DAMAGED_DIR))
    assert.equal(aside.length, 1)
    assert.deepEqual(readFileSync(join(dir, DAMAGED_DIR, aside[0]!)), damagedBytes, 'the damaged segment is kept as found')
    await run(false, async (url) => assert.deepEqual(await ids(url), [...without([6]), 13]))
  })
})
