// Index choices per store (src/platform/store/mongo.ts, notOnEngine): on the embedded engine the capture
// and forward-attempt slots get no secondary indexes (the engine scans for every query, and each
// index made every capture write dearer); on MongoDB every index is built. Without the unique
// (endpoint_id, id) index, the engine still refuses a second capture with an id already taken (its
// _id is `<token>.<id>`), and the capture path then takes the next id: nothing is overwritten or lost.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { MongoClient } from 'mongodb'
import { ensureIndexes } from '../src/platform/store/mongo.ts'
import { loadLayouts } from '../src/platform/store/partitioned.ts'
import { ALL_INDEXES } from '../src/collections.ts'
import { ATTEMPTS, CAPTURES, captures } from '../src/webhooks/store/capture-store.ts'
import { endpoints } from '../src/webhooks/store/endpoint-store.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'
import { get } from './helpers/http.ts'

const names = async (client: MongoClient, db: string, coll: string) => (await client.db(db).collection(coll).listIndexes().toArray()).map((i) => i.name as string).sort()

describe('platform: indexes per store', () => {
  let client: MongoClient
  before(async () => {
    client = await new MongoClient(process.env.TEST_MONGO_URL!).connect()
  })
  after(async () => client?.close())

  for (const embedded of [true, false]) {
    it(`${embedded ? 'on the engine: capture and attempt slots have only _id, other collections keep theirs' : 'as on MongoDB: every declared index is built'}`, async () => {
      const dbName = `t_idx_${randomBytes(4).toString('hex')}`
      const db = client.db(dbName)
      await loadLayouts(db, { [CAPTURES]: 2, [ATTEMPTS]: 2 })
      await ensureIndexes(db, ALL_INDEXES, { embedded })
      const captureSlot = await names(client, dbName, `${CAPTURES}_p001`)
      const attemptSlot = await names(client, dbName, `${ATTEMPTS}_p000`)
      if (embedded) {
        assert.deepEqual(captureSlot, ['_id_'])
        assert.deepEqual(attemptSlot, ['_id_'])
      } else {
        for (const n of ['endpoint_id', 'expires_at', 'endpoint_method', 'endpoint_sub_path', 'endpoint_forward_status', 'endpoint_received_at', 'endpoint_headers']) assert.ok(captureSlot.includes(n), `${n} in ${captureSlot}`)
        for (const n of ['endpoint_request', 'capture']) assert.ok(attemptSlot.includes(n), `${n} in ${attemptSlot}`)
      }
      // Unique indexes elsewhere are built on both (things rely on them): accounts' key hash, say.
      const withUnique = ALL_INDEXES.find((s) => !s.partitions && s.indexes.some((i) => i.unique))!
      const wanted = withUnique.indexes.filter((i) => i.unique).map((i) => i.name!)
      const got = await names(client, dbName, withUnique.collection)
      for (const n of wanted) assert.ok(got.includes(n), `${withUnique.collection}.${n} in ${got}`)
    })
  }

  describe('a capture id taken twice on the engine', function () {
    this.timeout(60_000)
    let sys: TestSystem
    after(async () => sys?.stop())

    it('is refused by _id, and the capture path stores the request under the next id', async () => {
      sys = await startSystem({ services: ['webhooks'], workers: false })
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key)
      const hook = () => ep.url.replace(/^https?:\/\/[^/]+/, sys.root.webhooks!)
      assert.equal((await capture(hook(), { body: 'first' })).status, 200)
      const [first] = await captures(sys.platform.db).findAll({ endpoint_id: ep.endpoint_id })
      // Hand the next request the id the first already has, as the engine's findAndModify can under load.
      await endpoints(sys.platform.db).updateOne({ _id: ep.endpoint_id }, { $inc: { seq: -1 } })
      assert.equal((await capture(hook(), { body: 'second' })).status, 200)
      const stored = (await captures(sys.platform.db).findAll({ endpoint_id: ep.endpoint_id })).sort((a, b) => a.id - b.id)
      assert.equal(stored.length, 2)
      assert.equal(stored[0]!.id, first!.id)
      assert.ok(stored[1]!.id > first!.id, `second id ${stored[1]!.id} after ${first!.id}`)
      const bodies = await Promise.all(stored.map(async (d) => (await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${d.id}`), { key })).json.body as string))
      assert.deepEqual(bodies, ['first', 'second'])
    })
  })
})
