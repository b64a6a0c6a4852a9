// Snapshots of the embedded engine (src/embedded/snapshot.ts) against the real engine:
// a round trip keeps every BSON type as it was, a damaged or foreign snapshot is refused before
// anything is restored, and every collection the code names is one that snapshots save.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Binary, Decimal128, Double, Int32, Long, MongoClient, ObjectId, type Db } from 'mongodb'
import { ALL_COLLECTIONS } from '../src/collections.ts'
import { DamagedSnapshotError, MANIFEST, readSnapshot, restoreSnapshot, writeSnapshot } from '../src/embedded/snapshot.ts'

describe('embedded store: snapshots', function () {
  this.timeout(60_000)
  let client: MongoClient
  let from: Db
  let into: Db
  let dir: string

  before(async () => {
    client = new MongoClient(process.env.TEST_MONGO_URL!)
    await client.connect()
    const id = Math.random().toString(36).slice(2, 8)
    from = client.db(`snap_from_${id}`)
    into = client.db(`snap_into_${id}`)
    dir = mkdtempSync(join(tmpdir(), 'qw-snapshot-test-'))
  })
  after(async () => {
    await client?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const typed = {
    _id: 'typed',
    int: new Int32(7),
    double: new Double(7),
    long: Long.fromString('9007199254740993'),
    decimal: Decimal128.fromString('12.30'),
    date: new Date('2026-11-23T10:00:00.123Z'),
    oid: new ObjectId('65f0a1b2c3d4e5f6a7b8c9d0'),
    bin: new Binary(Buffer.from([0, 1, 2, 255])),
    nested: { list: [1, 'two', { three: null }], empty: {} },
    unicode: 'Grüße 📦',
  }

  it('a paced snapshot rests between its reads and still saves every document once; a hurried one stops resting', async () => {
    await from.collection('paced').insertMany(Array.from({ length: 2_200 }, (_, i) => ({ _id: i, v: `p${i}` })) as never)
    let asked = 0
    let pace = 0.5
    const m = await writeSnapshot(from, ['paced'], join(dir, 'paced'), () => {
      asked++
      if (asked === 3) pace = 1 // as a stop's hurry does, half way through
      return pace
    })
    // Asked after each batch of 500 and at the end of the collection: the pacing was consulted.
    assert.ok(asked >= 5, `pace asked ${asked} times`)
    assert.deepEqual(m.collections.map((c) => [c.name, c.count]), [['paced', 2_200]])
    const restored = client.db(`${into.databaseName}_paced`)
    await restoreSnapshot(restored, await readSnapshot(join(dir, 'paced')))
    const ids = (await restored.collection('paced').find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id as unknown as number).sort((a, b) => a - b)
    assert.deepEqual(ids, Array.from({ length: 2_200 }, (_, i) => i))
  })

  it('writes and restores collections with every value and type as it was', async () => {
    await from.collection('typed').insertOne(typed as never)
    await from.collection('many').insertMany(Array.from({ length: 2_500 }, (_, i) => ({ _id: i, v: `v${i}` })) as never)
    const m = await writeSnapshot(from, ['many', 'typed', 'absent'], join(dir, 'a'))
    assert.deepEqual(m.collections.map((c) => [c.name, c.count]), [['many', 2_500], ['typed', 1]], 'an empty collection is left out')

    const snap = await readSnapshot(join(dir, 'a'))
    assert.equal(await restoreSnapshot(into, snap), 2_501)
    assert.equal(await into.collection('many').countDocuments({}), 2_500)
    const back = await into.collection('typed').findOne({ _id: 'typed' as never }, { promoteValues: false, promoteLongs: false })
    assert.ok(back!.int instanceof Int32 && back!.int.value === 7)
    assert.ok(back!.double instanceof Double && back!.double.value === 7, 'a whole double stays a double')
    assert.ok(back!.long instanceof Long && back!.long.toString() === '9007199254740993')
    assert.equal(String(back!.decimal), '12.30')
    assert.equal((back!.date as Date).toISOString(), '2026-11-23T10:00:00.123Z')
    assert.equal(String(back!.oid), '65f0a1b2c3d4e5f6a7b8c9d0')
    assert.deepEqual(Buffer.from((back!.bin as Binary).buffer), Buffer.from([0, 1, 2, 255]))
    const plain = await into.collection('typed').findOne({ _id: 'typed' as never })
    assert.deepEqual(plain!.nested, typed.nested)
    assert.equal(plain!.unicode, typed.unicode)
  })

  it('refuses a snapshot with a changed byte, a missing file, a torn manifest or another format version', async () => {
    await from.collection('one').insertOne({ _id: 'x', v: 1 } as never)
    const fresh = async (name: string) => {
      const d = join(dir, name)
      await writeSnapshot(from, ['one'], d)
      return d
    }
    const flipped = await fresh('flipped')
    const file = join(flipped, readdirSync(flipped).find((f) => f.endsWith('.bson'))!)
    const bytes = readFileSync(file)
    bytes[bytes.length - 3]! ^= 0xff
    writeFileSync(file, bytes)
    await assert.rejects(readSnapshot(flipped), (e: Error) => e instanceof DamagedSnapshotError && /does not match its checksum/.test(e.message))

    const missing = await fresh('missing')
    rmSync(join(missing, readdirSync(missing).find((f) => f.endsWith('.bson'))!))
    await assert.rejects(readSnapshot(missing), (e: Error) => e instanceof DamagedSnapshotError && /is missing/.test(e.message))

    const torn = await fresh('torn')
    writeFileSync(join(torn, MANIFEST), readFileSync(join(torn, MANIFEST), 'utf8').slice(0, 20))
    await assert.rejects(readSnapshot(torn), (e: Error) => e instanceof DamagedSnapshotError && /not valid JSON/.test(e.message))

    const future = await fresh('future')
    const m = JSON.parse(readFileSync(join(future, MANIFEST), 'utf8'))
    writeFileSync(join(future, MANIFEST), JSON.stringify({ ...m, version: 99 }))
    await assert.rejects(readSnapshot(future), (e: Error) => e instanceof DamagedSnapshotError && /format version 99/.test(e.message))
  })

  it('saves every collection the code names (the engine cannot list them)', () => {
    const saved = new Set([...ALL_COLLECTIONS.partitioned, ...ALL_COLLECTIONS.plain])
    const named = new Set<string>()
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name)
        if (e.isDirectory()) walk(p)
        else if (p.endsWith('.ts')) {
          const src = readFileSync(p, 'utf8')
          for (const m of src.matchAll(/collection(?:<[^>]*>)?\(\s*'([^']+)'/g)) named.add(m[1]!)
          for (const m of src.matchAll(/collection: '([^']+)'/g)) named.add(m[1]!)
          for (const m of src.matchAll(/partitioned<[^>]*>\(db, '([^']+)'/g)) named.add(m[1]!)
          for (const m of src.matchAll(/const BUCKET = '([^']+)'/g)) named.add(`${m[1]}.files`).add(`${m[1]}.chunks`)
        }
      }
    }
    for (const d of ['src', 'jobs', 'workers']) walk(d)
    assert.ok(named.size > 15, `found ${named.size} collection names`)
    const unsaved = [...named].filter((n) => !saved.has(n))
    assert.deepEqual(unsaved, [], 'collections no snapshot would save: add them to ALL_COLLECTIONS (src/collections.ts)')
  })
})
