// Partitioned captures through the real API, with the layout of the embedded default (several
// slots) and the layout a real MongoDB gets (one slot, the plain collection): listing newest-first
// across block and slot boundaries with cursors, reading by id, counts, the daily limit,
// retention and endpoint deletion behave the same.
import assert from 'node:assert/strict'
import { clock } from '../src/platform/clock.ts'
import { LAYOUT_COLLECTION } from '../src/platform/store/partitioned.ts'
import { expireCaptures } from '../src/webhooks/store/expire.ts'
import { CAPTURE_BLOCK, captures } from '../src/webhooks/store/capture-store.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'

const N = 2 * CAPTURE_BLOCK + 44 // three blocks: ids 1–127, 128–255, 256–300

for (const slots of [3, 1]) {
  describe(`platform: partitioned captures (${slots === 1 ? 'one slot: the real-MongoDB layout' : `${slots} slots`})`, function () {
    this.timeout(120_000)
    let sys: TestSystem
    let key: string
    let ep: { endpoint_id: string; url: string }
    /** The ids stored, newest first (the engine can skip an id under concurrency: see capture.ts). */
    let ids: number[]
    const hook = () => ep.url.replace(/^https?:\/\/[^/]+/, sys.root.webhooks!)

    before(async () => {
      sys = await startSystem({ services: ['webhooks'], workers: false, env: { STORE_PARTITIONS: String(slots) } })
      key = await signup(sys, 'starter') // 10,000 a day, 168 h retention
      ep = await createEndpoint(sys, key)
      // Eight senders at once, as a busy webhook source would.
      let next = 1
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = next++; i <= N; i = next++) {
            const r = await capture(hook(), { body: JSON.stringify({ n: i }), headers: { 'content-type': 'application/json' } })
            assert.equal(r.status, 200, r.text)
          }
        }),
      )
      ids = (await captures(sys.platform.db).findAll({ endpoint_id: ep.endpoint_id })).map((d) => d.id).sort((a, b) => b - a)
      assert.equal(ids.length, N)
      assert.ok(ids.at(-1)! < CAPTURE_BLOCK && ids[0]! >= 2 * CAPTURE_BLOCK, 'three blocks')
    })
    after(() => sys?.stop())

    it('fixes the layout in the database and spreads the captures over it', async () => {
      const layout = await sys.platform.db.collection(LAYOUT_COLLECTION).findOne({ _id: 'webhook_captures' as never })
      assert.equal(layout!.slots, slots)
      const parts = captures(sys.platform.db)
      assert.equal(parts.slots, slots)
      const perSlot = await Promise.all(parts.all().map((c) => c.countDocuments({ endpoint_id: ep.endpoint_id })))
      assert.equal(perSlot.reduce((a, b) => a + b, 0), N)
      if (slots > 1) assert.equal(perSlot.filter((n) => n > 0).length, 3, `three blocks in three slots: ${perSlot}`)
      else assert.equal(await sys.platform.db.collection('webhook_captures').countDocuments({ endpoint_id: ep.endpoint_id }), N)
    })

    it('lists newest first across blocks, page by page with next_before, each id once', async () => {
      const seen: number[] = []
      let before: number | null = null
      for (let page = 0; page < 10; page++) {
        const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=70${before ? `&before=${before}` : ''}`), { key })
        assert.equal(r.status, 200, r.text)
        seen.push(...r.json.requests.map((q: { id: number }) => q.id))
        before = r.json.next_before
        if (before === null) break
      }
      assert.deepEqual(seen, ids)
      // A cursor right at a block boundary.
      const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests?limit=3&before=${CAPTURE_BLOCK + 1}`), { key })
      assert.deepEqual(r.json.requests.map((q: { id: number }) => q.id), ids.filter((id) => id <= CAPTURE_BLOCK).slice(0, 3))
    })

    it('reads any capture by id, with its exact body; an unknown id is a 404', async () => {
      const last = (limit: number) => ids.find((id) => id < limit)!
      for (const id of [ids.at(-1)!, last(CAPTURE_BLOCK), last(CAPTURE_BLOCK + 1), last(2 * CAPTURE_BLOCK + 1), ids[0]!]) {
        const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${id}`), { key })
        assert.equal(r.status, 200, r.text)
        assert.equal(r.json.id, id)
        const body = JSON.parse(r.json.body) as { n: number }
        assert.ok(body.n >= 1 && body.n <= N)
      }
      assert.equal((await get(api(sys, `/endpoints/${ep.endpoint_id}/requests/${ids[0]! + 1}`), { key })).status, 404)
    })

    it("counts the endpoint's requests and the day's usage over every slot", async () => {
      const r = await get(api(sys, `/endpoints/${ep.endpoint_id}`), { key })
      assert.equal(r.json.request_count, N)
      assert.equal((await get(api(sys, '/account'), { key })).json.usage.requests_today, N)
    })

    it('retention removes captures from every slot; deleting an endpoint removes all of its captures', async () => {
      const other = await createEndpoint(sys, key)
      for (let i = 0; i < 3; i++) assert.equal((await capture(other.url.replace(/^https?:\/\/[^/]+/, sys.root.webhooks!), { body: 'x' })).status, 200)
      const removed = await call('DELETE', api(sys, `/endpoints/${other.endpoint_id}`), { key })
      assert.equal(removed.json.requests_deleted, 3)

      clock.setNow(new Date(Date.now() + 169 * 3_600_000)) // past the starter plan's 168 h
      try {
        const report = await expireCaptures(sys.platform.db, clock.now(), 100)
        assert.equal(report.captures, N)
        assert.equal(await captures(sys.platform.db).countDocuments({ endpoint_id: ep.endpoint_id }), 0)
        const r = await get(api(sys, `/endpoints/${ep.endpoint_id}/requests`), { key })
        assert.deepEqual(r.json.requests, [])
      } finally {
        clock.reset()
      }
    })
  })
}
