// Search across the slots of the partitioned capture collection (capture-search.ts): with more
// blocks than slots (a slot holds several blocks of the endpoint) and with the one-slot layout of a
// real MongoDB, every filter — broad, selective, combined, text, time range — pages newest first
// with `before` and polls with `after` to exactly what the stored documents say, each id once;
// first while the blocks are too new for search digests, then again once the digests of the sealed
// blocks are built and prune (search-digest.ts).
import assert from 'node:assert/strict'
import { clock } from '../src/platform/clock.ts'
import { CAPTURE_BLOCK, captures, type CaptureDoc } from '../src/webhooks/store/capture-store.ts'
import { digestCache, SEALED_AFTER_MS } from '../src/webhooks/search/search-digest.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { api, capture, createEndpoint, signup } from './helpers/webhooks.ts'

const N = 4 * CAPTURE_BLOCK + 60 // five blocks: with 3 slots, two slots hold two blocks each

function request(n: number) {
  const method = n % 97 === 0 ? 'DELETE' : n % 10 === 0 ? 'PUT' : 'POST'
  const path = n % 150 === 7 ? '/rare' : ['/a/x', '/b', '/a/y'][n % 3]!
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-kind': n % 2 ? 'odd' : 'even' }
  if (n % 111 === 5) headers['x-rare'] = '1'
  return { method, path, headers, body: JSON.stringify({ n, t: n % 50 === 3 ? 'Needle' : 'hay' }) }
}

for (const slots of [3, 1]) {
  describe(`webhooks: search across slots (${slots === 1 ? 'one slot: the real-MongoDB layout' : `${slots} slots, more blocks than slots`})`, function () {
    this.timeout(180_000)
    let sys: TestSystem
    let key: string
    let token: string
    let docs: CaptureDoc[]

    const page = async (qs: string) => {
      const r = await get(api(sys, `/endpoints/${token}/requests?${qs}`), { key })
      assert.equal(r.status, 200, r.text)
      return { ids: r.json.requests.map((x: { id: number }) => x.id) as number[], next: r.json.next_before as number | null }
    }
    /** Newest first, what the stored documents say matches (computed here, not by the database). */
    const expected = (match: (d: CaptureDoc) => boolean) => docs.filter(match).map((d) => d.id)

    before(async () => {
      sys = await startSystem({ services: ['webhooks'], workers: false, env: { STORE_PARTITIONS: String(slots) } })
      key = await signup(sys, 'starter')
      const ep = await createEndpoint(sys, key)
      token = ep.endpoint_id
      const hook = (ep.url as string).replace(/^https?:\/\/[^/]+/, sys.root.webhooks!)
      let next = 1
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let n = next++; n <= N; n = next++) {
            const q = request(n)
            const r = await capture(`${hook}${q.path}`, { method: q.method, body: q.body, headers: q.headers })
            assert.equal(r.status, 200, r.text)
          }
        }),
      )
      docs = (await captures(sys.platform.db).findAll({ endpoint_id: token })).sort((a, b) => b.id - a.id)
      assert.equal(docs.length, N)
      if (slots > 1) {
        const perSlot = await Promise.all(captures(sys.platform.db).all().map((c) => c.countDocuments({ endpoint_id: token })))
        assert.equal(perSlot.filter((n) => n > CAPTURE_BLOCK).length, 2, `two slots hold two blocks: ${perSlot}`)
      }
    })
    after(async () => {
      clock.reset()
      await sys?.stop()
    })

    const third = () => docs[Math.floor(N / 3)]!.received_at
    const twoThirds = () => docs[Math.floor((2 * N) / 3)]!.received_at
    const iso = (d: Date) => d.toISOString().replace('Z', '')
    const cases: Array<[string, () => string, (d: CaptureDoc) => boolean]> = [
      ['method=PUT (1 in 10)', () => 'method=PUT', (d) => d.method === 'PUT'],
      ['method=DELETE (1 in 97)', () => 'method=DELETE', (d) => d.method === 'DELETE'],
      ['header name (1 in 111)', () => 'header=x-rare', (d) => 'x-rare' in d.headers],
      ['header name:value (1 in 2)', () => 'header=X-Kind:odd', (d) => d.headers['x-kind'] === 'odd'],
      ['text (1 in 50)', () => 'q=NEEDLE', (d) => Boolean(d.search_text?.includes('needle'))],
      ['path prefix (2 in 3)', () => 'path_prefix=/a/', (d) => d.sub_path.startsWith('/a/')],
      ['path prefix (1 in 150)', () => 'path_prefix=/rare', (d) => d.sub_path.startsWith('/rare')],
      [
        'combined',
        () => 'method=POST&header=x-kind:even&path_prefix=/b',
        (d) => d.method === 'POST' && d.headers['x-kind'] === 'even' && d.sub_path.startsWith('/b'),
      ],
      [
        'time range (the middle third)',
        () => `since=${iso(twoThirds())}&until=${iso(third())}`,
        (d) => d.received_at >= twoThirds() && d.received_at < third(),
      ],
    ]

    const checkEveryFilter = () => {
      for (const [label, qs, match] of cases) {
        it(`${label}: pages with before to exactly the matching ids, newest first`, async () => {
          const want = expected(match)
          assert.ok(want.length > 0, 'the filter matches something')
          const seen: number[] = []
          let before: number | null = null
          for (let i = 0; i < 200; i++) {
            const p = await page(`${qs()}&limit=7${before !== null ? `&before=${before}` : ''}`)
            seen.push(...p.ids)
            before = p.next
            if (before === null) break
          }
          assert.deepEqual(seen, want)
          // One page as large as everything, and the whole range below a cursor in the middle of a block.
          assert.deepEqual((await page(`${qs()}&limit=500`)).ids, want)
          const cut = 2 * CAPTURE_BLOCK + 17
          assert.deepEqual((await page(`${qs()}&limit=500&before=${cut}`)).ids, want.filter((id) => id < cut))
        })

        it(`${label}: after returns the newest matches above the cursor, and between two cursors`, async () => {
          const want = expected(match)
          const after = CAPTURE_BLOCK - 3
          assert.deepEqual((await page(`${qs()}&limit=5&after=${after}`)).ids, want.filter((id) => id > after).slice(0, 5))
          const before = 3 * CAPTURE_BLOCK + 9
          assert.deepEqual((await page(`${qs()}&limit=500&after=${after}&before=${before}`)).ids, want.filter((id) => id > after && id < before))
        })
      }
    }

    describe('blocks too new for digests: every block is searched', () => {
      it('digests no block whose ids may still be taken by a capture in progress: a term no capture has is looked for in every block', async () => {
        const cache = digestCache(sys.platform.db)
        cache.pruner(token, docs[0]!.id, {}) // starts a build
        await cache.settled(token)
        const mayHold = cache.pruner(token, docs[0]!.id, { q: 'zzqqxxjjvvkk' })
        for (let b = 0; b <= Math.floor(docs[0]!.id / CAPTURE_BLOCK); b++) assert.equal(mayHold(b), true, `block ${b}`)
      })
      checkEveryFilter()
    })

    describe('sealed blocks with digests: blocks that cannot match are skipped', () => {
      before(async () => {
        // Every capture is now older than a request can last: all blocks below the newest are sealed.
        clock.advance(SEALED_AFTER_MS + 1_000)
        const cache = digestCache(sys.platform.db)
        await cache.settled(token) // a build the first phase started (blocks not sealed then)
        clock.advance(60_000) // past the rebuild interval
        cache.pruner(token, docs[0]!.id, {})
        await cache.settled(token)
      })

      it('rules out every sealed block for a term no capture has, and never the newest block', () => {
        const mayHold = digestCache(sys.platform.db).pruner(token, docs[0]!.id, { q: 'zzqqxxjjvvkk' })
        const top = Math.floor(docs[0]!.id / CAPTURE_BLOCK)
        for (let b = 0; b < top; b++) assert.equal(mayHold(b), false, `sealed block ${b}`)
        assert.equal(mayHold(top), true, 'the newest block has no higher block to seal it')
        const rare = digestCache(sys.platform.db).pruner(token, docs[0]!.id, { header: [{ name: 'x-rare' }] })
        for (const d of docs.filter((x) => 'x-rare' in x.headers)) assert.equal(rare(Math.floor(d.id / CAPTURE_BLOCK)), true, `block of ${d.id}`)
      })
      checkEveryFilter()
    })

    it('a filter that matches nothing returns an empty page with no cursor', async () => {
      assert.deepEqual(await page('header=x-none&limit=10'), { ids: [], next: null })
      assert.deepEqual(await page('q=nothing-like-this&limit=10&before=300'), { ids: [], next: null })
    })
  })
}
