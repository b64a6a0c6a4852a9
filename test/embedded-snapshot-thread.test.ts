// The snapshot thread of `start` (src/embedded/snapshot-client.ts and snapshot-thread.ts)
// against the real engine: it writes what the main thread asks, a snapshot that fails there is a
// rejected promise (the periodic one is then logged and the previous snapshot kept) and the thread
// goes on serving, and a thread stopped under a snapshot rejects it rather than leaving it hanging.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import { snapshotThread } from '../src/embedded/snapshot-client.ts'
import { readSnapshot } from '../src/embedded/snapshot.ts'

describe('embedded store: the snapshot thread', function () {
  this.timeout(60_000)
  const database = `snap_thread_${Math.random().toString(36).slice(2, 8)}`
  let client: MongoClient
  let dir: string
  before(async () => {
    client = await new MongoClient(process.env.TEST_MONGO_URL!).connect()
    await client.db(database).collection('things').insertMany(Array.from({ length: 1_200 }, (_, i) => ({ _id: i, v: `t${i}` })) as never)
    dir = mkdtempSync(join(tmpdir(), 'qw-snapshot-thread-'))
  })
  after(async () => {
    await client?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const data = () => ({ mongoUrl: process.env.TEST_MONGO_URL!, database, known: { partitioned: [], plain: ['things', 'absent'] } })

  it('writes the snapshot asked for; a failing one rejects and the thread serves the next', async () => {
    const thread = snapshotThread(data())
    try {
      const m = await thread.write(join(dir, 'one'), 1)
      assert.deepEqual(m.collections.map((c) => [c.name, c.count]), [['things', 1_200]])
      assert.equal((await readSnapshot(join(dir, 'one'))).manifest.collections[0]!.count, 1_200)
      // The folder must not exist: the thread's mkdir fails, and the caller hears why.
      mkdirSync(join(dir, 'taken'))
      await assert.rejects(thread.write(join(dir, 'taken'), 1), /EEXIST/)
      const again = await thread.write(join(dir, 'two'), 0.5)
      assert.equal(again.collections[0]!.count, 1_200)
    } finally {
      await thread.stop()
    }
  })

  it('a thread stopped under a snapshot rejects it; the next write starts a new thread', async () => {
    const thread = snapshotThread(data())
    const under = thread.write(join(dir, 'cut'), 0.05)
    await thread.stop()
    await assert.rejects(under, /snapshot thread exited/)
    assert.ok(!existsSync(join(dir, 'cut', 'manifest.json')), 'no manifest: the cut snapshot is never swapped in')
    const m = await thread.write(join(dir, 'after'), 1)
    assert.equal(m.collections[0]!.count, 1_200)
    await thread.stop()
  })
})
