// Group-committed counter writes (src/platform/store/group-line.ts) against the embedded engine, as the
// capture path uses them: concurrent request-id claims of one endpoint become one $inc with
// distinct consecutive ids, concurrent day-counter units of one account one $inc, and the daily
// limit still lets exactly as many through as units are left.
import assert from 'node:assert/strict'
import { MongoClient, type Db } from 'mongodb'
import { groupLine } from '../src/platform/store/group-line.ts'
import { endpoints, takeRequestIds, type EndpointDoc } from '../src/webhooks/store/endpoint-store.ts'
import { takeDailyRequests, usedToday } from '../src/webhooks/store/limit-store.ts'

describe('platform: group-committed counter writes', () => {
  let client: MongoClient
  let db: Db
  const commands: string[] = []

  before(async () => {
    client = new MongoClient(process.env.TEST_MONGO_URL!, { monitorCommands: true })
    client.on('commandStarted', (e) => {
      if (['findAndModify', 'update'].includes(e.commandName)) commands.push(e.commandName)
    })
    await client.connect()
    db = client.db(`group_line_${Date.now()}`)
  })
  after(async () => client?.close())
  beforeEach(() => {
    commands.length = 0
  })

  it('16 concurrent request-id claims: ids 1–16 each once, in two writes (the first alone, the rest together)', async () => {
    await endpoints(db).insertOne({ _id: 'tok1', seq: 0 } as EndpointDoc)
    const claim = groupLine<null, EndpointDoc | null>(async (token, items) => {
      const ep = await takeRequestIds(db, token, items.length)
      return items.map((_, i) => (ep ? { ...ep, seq: ep.seq - items.length + 1 + i } : null))
    })
    const got = await Promise.all(Array.from({ length: 16 }, () => claim('tok1', null)))
    assert.deepEqual(got.map((e) => e!.seq), Array.from({ length: 16 }, (_, i) => i + 1))
    assert.deepEqual(commands, ['findAndModify', 'findAndModify'])
    assert.equal((await endpoints(db).findOne({ _id: 'tok1' }))!.seq, 16)
    // An unknown token: every caller of the group learns null.
    assert.deepEqual(await Promise.all([claim('nope', null), claim('nope', null)]), [null, null])
  })

  it('a failing group fails only its own callers; the line goes on', async () => {
    let calls = 0
    const line = groupLine<number, number>(async (_key, items) => {
      if (calls++ === 1) throw new Error('boom')
      return items.map((n) => n * 2)
    })
    const first = line('k', 1) // goes alone
    const second = [line('k', 2), line('k', 3)] // together, and fail
    assert.equal(await first, 2)
    await assert.rejects(Promise.all(second), /boom/)
    assert.deepEqual(await Promise.all([line('k', 4), line('other', 5)]), [8, 10])
  })

  it('day units: many at once take one write; near the limit exactly the units left succeed', async () => {
    const now = new Date()
    const take = groupLine<number, boolean>((key, items) => takeDailyRequests(db, key, now, items[0]!, items.length))
    // Plenty left: after the first (which creates the day's counter), the other 15 are one $inc.
    const plenty = await Promise.all(Array.from({ length: 16 }, () => take('acct-a', 1_000)))
    assert.equal(plenty.filter(Boolean).length, 16)
    assert.equal(await usedToday(db, 'acct-a', now), 16)
    commands.length = 0
    assert.deepEqual(await Promise.all(Array.from({ length: 8 }, () => take('acct-a', 1_000))), new Array(8).fill(true))
    assert.deepEqual(commands, ['update', 'update'], 'the first alone, the other seven as one')
    // 10 allowed, 24 used: nothing more.
    assert.equal((await Promise.all(Array.from({ length: 5 }, () => take('acct-a', 10)))).filter(Boolean).length, 0)
    // 20 at once with 7 left: exactly 7.
    const got = await Promise.all(Array.from({ length: 20 }, () => take('acct-b', 7)))
    assert.equal(got.filter(Boolean).length, 7)
    assert.equal(await usedToday(db, 'acct-b', now), 7)
  })
})
