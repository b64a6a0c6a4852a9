// Search digests (search-digest.ts) on known blocks: no capture is ever ruled out by a filter it
// matches (the Bloom filter has no false "no"), terms no capture has rule a block out, the time
// span rules out blocks outside since/until, and a block with too much body text keeps a digest
// that still rules out by the other filters but never by text.
import assert from 'node:assert/strict'
import { buildDigest, digestMayHold } from '../src/webhooks/search/search-digest.ts'
import type { SearchQuery } from '../src/webhooks/search/search.ts'

const T0 = Date.parse('2026-11-20T10:00:00Z')
function doc(n: number, bodyChars = 200) {
  const text = `{"id":"evt_${n}","type":"${n % 7 === 0 ? 'charge.failed' : 'invoice.paid'}","note":"ünïcode ${n}"}`.padEnd(bodyChars, 'x').toLowerCase()
  return {
    id: n,
    method: ['POST', 'PUT', 'GET'][n % 3]!,
    sub_path: n % 5 === 0 ? '' : `/svc${n % 4}/events/${n}`,
    headers: { 'content-type': 'application/json', 'x-request-id': `req-${n}`, ...(n % 9 === 0 ? { 'x-odd': 'yes' } : {}) },
    search_text: text,
    received_at: new Date(T0 + n * 1_000),
  }
}
const block = Array.from({ length: 128 }, (_, i) => doc(1_000 + i))

describe('webhooks: search digests', () => {
  it('never rules out a block for a filter one of its captures matches', async () => {
    const dg = await buildDigest(block)
    assert.equal(dg.text, true)
    for (const d of block) {
      const queries: SearchQuery[] = [
        { method: [d.method] },
        { method: ['DELETE', d.method] },
        { header: [{ name: 'x-request-id' }, { name: 'x-request-id', value: d.headers['x-request-id'] }] },
        { q: d.search_text.slice(3, 3 + (d.id % 17) + 1) },
        { q: d.search_text.slice(10, 40) },
        { since: d.received_at, until: new Date(d.received_at.getTime() + 1) },
      ]
      if (d.sub_path) for (const len of [1, 4, d.sub_path.length]) queries.push({ path_prefix: d.sub_path.slice(0, len) })
      if ('x-odd' in d.headers) queries.push({ header: [{ name: 'x-odd', value: 'yes' }], method: [d.method] })
      for (const q of queries) assert.equal(digestMayHold(dg, q), true, `${d.id}: ${JSON.stringify(q)}`)
    }
  })

  it('rules a block out for terms none of its captures has, and for a time range outside its span', async () => {
    const dg = await buildDigest(block)
    const absent: SearchQuery[] = [
      { method: ['DELETE'] },
      { path_prefix: '/nowhere' },
      { header: [{ name: 'x-github-event' }] },
      { header: [{ name: 'x-request-id', value: 'req-999999' }] },
      { q: 'zebra crossing' },
      { q: 'ÜNÏCODE 5' }, // ünïcode 5 is not there (1000…1127 are)
    ]
    for (const q of absent) assert.equal(digestMayHold(dg, q), false, JSON.stringify(q))
    const first = block[0]!.received_at.getTime()
    const last = block.at(-1)!.received_at.getTime()
    assert.equal(digestMayHold(dg, { since: new Date(last + 1) }), false)
    assert.equal(digestMayHold(dg, { since: new Date(last) }), true)
    assert.equal(digestMayHold(dg, { until: new Date(first) }), false, 'until is exclusive')
    assert.equal(digestMayHold(dg, { until: new Date(first + 1) }), true)
    assert.equal(digestMayHold(dg, { forward_status: 'dead' }), true, 'forward status changes: never ruled out')
    assert.equal(digestMayHold(dg, { q: 'zz' }), true, 'a query shorter than a trigram cannot be ruled out')
  })

  it('keeps a digest without text for a block with too much body text: q cannot rule it out, the rest still can', async () => {
    const big = Array.from({ length: 128 }, (_, i) => doc(2_000 + i, 5_000))
    const dg = await buildDigest(big)
    assert.equal(dg.text, false)
    assert.equal(digestMayHold(dg, { q: 'zebra crossing' }), true)
    assert.equal(digestMayHold(dg, { q: 'zebra crossing', method: ['DELETE'] }), false)
    assert.equal(digestMayHold(dg, { header: [{ name: 'x-github-event' }] }), false)
    assert.equal(digestMayHold(dg, { method: ['PUT'] }), true)
  })

  it('an empty block holds nothing', async () => {
    assert.equal(digestMayHold(await buildDigest([]), {}), false)
  })
})
