// Group-committed inserts (src/platform/store/group-insert.ts) against the embedded engine: concurrent
// callers are batched, each learns its own document's outcome, and a duplicate in a batch fails
// only its own caller (the engine fails a whole unordered insert without per-document errors).
import assert from 'node:assert/strict'
import { MongoClient, type Collection } from 'mongodb'
import { groupInserter } from '../src/platform/store/group-insert.ts'
import { isDuplicateKey } from '../src/platform/store/mongo.ts'

interface Doc {
  _id: string
  n: number
}

describe('platform: group-committed inserts', () => {
  let client: MongoClient
  let col: Collection<Doc>
  const commands: string[] = []

  before(async () => {
    client = new MongoClient(process.env.TEST_MONGO_URL!, { monitorCommands: true })
    client.on('commandStarted', (e) => {
      if (e.commandName === 'insert') commands.push(e.commandName)
    })
    await client.connect()
    col = client.db(`group_insert_${Date.now()}`).collection<Doc>('docs')
  })
  after(async () => client?.close())
  beforeEach(() => {
    commands.length = 0
  })

  it('stores every document of 200 concurrent calls in far fewer insert commands', async () => {
    const insert = groupInserter(col)
    await Promise.all(Array.from({ length: 200 }, (_, n) => insert({ _id: `a${n}`, n })))
    assert.equal(await col.countDocuments({ _id: { $regex: /^a/ } }), 200)
    assert.ok(commands.length < 20, `${commands.length} insert commands for 200 documents`)
  })

  it('resolves only once the document is stored', async () => {
    const insert = groupInserter(col)
    await insert({ _id: 'stored-first', n: 1 })
    assert.equal((await col.findOne({ _id: 'stored-first' }))?.n, 1)
  })

  it('a duplicate fails its own caller with a duplicate-key error; the rest of its batch is stored', async () => {
    await col.insertOne({ _id: 'taken', n: 0 })
    const insert = groupInserter(col)
    // The first call goes out alone; the next 30 wait and go out together, one of them a duplicate.
    const first = insert({ _id: 'b-first', n: -1 })
    const rest = Array.from({ length: 30 }, (_, n) => insert({ _id: n === 17 ? 'taken' : `b${n}`, n }).then(() => 'ok', (e: unknown) => e))
    await first
    const outcomes = await Promise.all(rest)
    outcomes.forEach((o, n) => {
      if (n === 17) assert.ok(isDuplicateKey(o), `expected a duplicate-key error, got ${String(o)}`)
      else assert.equal(o, 'ok', `document ${n}: ${String(o)}`)
    })
    assert.equal(await col.countDocuments({ _id: { $regex: /^b\d/ } }), 29)
    assert.equal((await col.findOne({ _id: 'taken' }))?.n, 0, 'the existing document is untouched')
  })

  it('a failure of the whole command reaches every caller of that batch, and the line keeps going', async () => {
    const insert = groupInserter(col)
    // A document over MongoDB's 16 MB limit: the driver refuses the whole command.
    const bad = insert({ _id: 'bad', n: 1, pad: 'x'.repeat(17 * 1024 * 1024) } as unknown as Doc).then(
      () => 'ok',
      (e: unknown) => e,
    )
    assert.notEqual(await bad, 'ok')
    await insert({ _id: 'after-bad', n: 2 })
    assert.equal((await col.findOne({ _id: 'after-bad' }))?.n, 2)
  })
})
