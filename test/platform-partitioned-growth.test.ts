// The other collections that grow with use are partitioned too (docs/embedded-store.md): forward
// attempts (placed with their capture, by endpoint and block of ids) and invoice idempotency keys
// (by the key's hash). Run with several slots (the embedded default) and with one slot (the layout
// a real MongoDB gets: the plain collection under its own name): listing, reading, deleting with
// the capture or endpoint, and expiry behave the same. And a database that already holds one of
// them as a plain collection (an earlier version's data folder) keeps it as its one slot.
import assert from 'node:assert/strict'
import { idempotencyIndexes, deleteExpiredKeys } from '../src/invoice/idempotency.ts'
import { LAYOUT_COLLECTION, loadLayouts, partitioned } from '../src/platform/store/partitioned.ts'
import { ATTEMPTS, CAPTURE_BLOCK, CAPTURES, attempts, captures } from '../src/webhooks/store/capture-store.ts'
import { endpoints } from '../src/webhooks/store/endpoint-store.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get } from './helpers/http.ts'
import { account, row } from './helpers/invoice-batch.ts'
import { api, capture, createEndpoint, signup, startTarget, waitFor, type Target } from './helpers/webhooks.ts'

const KEYS = idempotencyIndexes.collection

for (const slots of [3, 1]) {
  describe(`platform: partitioned forward attempts and idempotency keys (${slots === 1 ? 'one slot: the real-MongoDB layout' : `${slots} slots`})`, function () {
    this.timeout(120_000)
    let sys: TestSystem
    let target: Target
    before(async () => {
      sys = await startSystem({ services: ['webhooks', 'invoice'], env: { STORE_PARTITIONS: String(slots), WEBHOOK_FORWARD_SCHEDULE_MS: '0,200,200' } })
      // Each body is refused once, then taken: every capture gets two attempts.
      const seen = new Set<string>()
      target = await startTarget((r, _i, res) => {
        const first = !seen.has(r.body.toString())
        seen.add(r.body.toString())
        res.statusCode = first ? 500 : 200
        res.end()
      })
    })
    after(async () => {
      await target?.close()
      await sys?.stop()
    })

    it('forward attempts: stored beside their capture across a block boundary, listed, and deleted with the endpoint', async () => {
      const db = sys.platform.db
      const key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key, { forward_url: target.url })
      // The next ids are 127, 128, 129: the last of block 0 and the first two of block 1.
      await endpoints(db).updateOne({ _id: ep.endpoint_id }, { $set: { seq: CAPTURE_BLOCK - 2 } })
      for (const n of [1, 2, 3]) assert.equal((await capture(ep.url.replace(/^https?:\/\/[^/]+/, sys.root.webhooks!), { body: `body-${n}` })).status, 200)
      const ids = [CAPTURE_BLOCK - 1, CAPTURE_BLOCK, CAPTURE_BLOCK + 1]
      for (const id of ids) {
        const done = await waitFor(async () => {
          const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key })
          return r.json.forward?.status === 'delivered' && r.json
        }, 30_000, `delivery of ${id}`)
        assert.deepEqual(done.forward_attempts.map((a: { attempt: number; status: number; ok: boolean }) => [a.attempt, a.status, a.ok]), [[1, 500, false], [2, 200, true]])
      }
      const layout = await db.collection(LAYOUT_COLLECTION).findOne({ _id: ATTEMPTS as never })
      assert.equal(layout!.slots, slots)
      const tries = attempts(db)
      const parts = captures(db)
      // Each attempt lies in the slot of the same number as its capture's.
      for (const id of ids) {
        const where = await Promise.all(tries.all().map((c) => c.countDocuments({ endpoint_id: ep.endpoint_id, request_id: id })))
        const capWhere = await Promise.all(parts.all().map((c) => c.countDocuments({ endpoint_id: ep.endpoint_id, id })))
        assert.deepEqual(where.map((n) => (n > 0 ? 1 : 0)), capWhere, `attempts of ${id} beside their capture`)
        assert.equal(where.reduce((a, b) => a + b, 0), 2)
      }
      if (slots > 1) {
        const used = (await Promise.all(tries.all().map((c) => c.countDocuments({ endpoint_id: ep.endpoint_id })))).filter((n) => n > 0)
        assert.equal(used.length, 2, 'two blocks, two slots')
      } else {
        assert.equal(tries.name(0), ATTEMPTS)
        assert.equal(await db.collection(ATTEMPTS).countDocuments({ endpoint_id: ep.endpoint_id }), 6)
      }
      const removed = await call('DELETE', api(sys, `/endpoints/${ep.endpoint_id}`), { key })
      assert.equal(removed.status, 200, removed.text)
      assert.equal(await tries.countDocuments({ endpoint_id: ep.endpoint_id }), 0)
      assert.equal(await parts.countDocuments({ endpoint_id: ep.endpoint_id }), 0)
    })

    it('idempotency keys: spread by their hash, replayed from their slot, expired from every slot', async () => {
      const db = sys.platform.db
      const { key, id } = await account(sys, 'starter')
      const sent = ['order-a', 'order-b', 'order-c', 'order-d', 'order-e', 'order-f']
      const first = new Map<string, string>()
      for (const [i, k] of sent.entries()) {
        const r = await call('POST', `${sys.url.invoice}/invoice`, { json: row(i), key, headers: { 'idempotency-key': k } })
        assert.equal(r.status, 200, r.text)
        first.set(k, r.headers.get('x-invoice-id')!)
      }
      for (const [i, k] of sent.entries()) {
        const again = await call('POST', `${sys.url.invoice}/invoice`, { json: row(i), key, headers: { 'idempotency-key': k } })
        assert.equal(again.status, 200)
        assert.equal(again.headers.get('idempotent-replayed'), 'true')
        assert.equal(again.headers.get('x-invoice-id'), first.get(k))
      }
      const parts = partitioned(db, KEYS)
      assert.equal(parts.slots, slots)
      const perSlot = await Promise.all(parts.all().map((c) => c.countDocuments({ account_id: id })))
      assert.equal(perSlot.reduce((a, b) => a + b, 0), sent.length)
      if (slots > 1) assert.ok(perSlot.filter((n) => n > 0).length > 1, `spread over the slots: ${perSlot}`)
      else assert.equal(await db.collection(KEYS).countDocuments({ account_id: id }), sent.length)
      assert.ok((await deleteExpiredKeys(db, new Date(Date.now() + 25 * 3_600_000))) >= sent.length)
      assert.equal(await parts.countDocuments({ account_id: id }), 0)
    })
  })
}

describe('platform: partitioning a collection a database already holds', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: [], workers: false })
  })
  after(() => sys?.stop())

  it('keeps a non-empty plain collection as its one slot; an empty or absent one gets the slots asked for', async () => {
    const db = sys.platform.mongo.db(`${sys.config.MONGO_DB}_legacy`)
    await db.collection(ATTEMPTS).insertOne({ _id: 'old.1.0.1' as never, endpoint_id: 'old', request_id: 1 })
    const got = await loadLayouts(db, { [ATTEMPTS]: 5, [CAPTURES]: 5, [KEYS]: 5 })
    assert.deepEqual(Object.fromEntries(got), { [ATTEMPTS]: 1, [CAPTURES]: 5, [KEYS]: 5 })
    assert.equal((await attempts(db).findAll({ endpoint_id: 'old' })).length, 1, 'the stored attempt is still found')
    // Fixed once: a later load keeps the stored layout whatever is asked.
    const later = await loadLayouts(db, { [ATTEMPTS]: 7, [CAPTURES]: 7, [KEYS]: 7 })
    assert.deepEqual(Object.fromEntries(later), { [ATTEMPTS]: 1, [CAPTURES]: 5, [KEYS]: 5 })
  })
})
