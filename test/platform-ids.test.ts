// Random identifiers and API keys (src/platform/ids.ts): drawn from a pooled CSPRNG, so ids must stay
// distinct, of the right length and alphabet, and uniform over it across many pool refills.
import assert from 'node:assert/strict'
import { base62, newApiKey, randomId } from '../src/platform/ids.ts'

describe('platform: random ids', () => {
  it('are distinct, 22 base62 characters, and uniform over the alphabet across many pool refills', () => {
    const ids = Array.from({ length: 20_000 }, randomId) // ~450 KB of pool: about 110 refills
    assert.equal(new Set(ids).size, ids.length)
    const counts = new Map<string, number>()
    for (const id of ids) {
      assert.match(id, /^[0-9A-Za-z]{22}$/)
      for (const c of id) counts.set(c, (counts.get(c) ?? 0) + 1)
    }
    assert.equal(counts.size, 62, 'every character occurs')
    // 440,000 characters: 7,097 expected each, a standard deviation of ~83. A bias such as the
    // modulo bias of `byte % 62` over all 256 values (+25 % for the first 8 characters) fails this.
    const expected = (ids.length * 22) / 62
    for (const [c, n] of counts) assert.ok(Math.abs(n - expected) < 0.06 * expected, `${c}: ${n} vs ${Math.round(expected)}`)
  })

  it('keys carry their prefix and 40 characters; lengths other than 22 work', () => {
    assert.match(newApiKey('inv_'), /^inv_[0-9A-Za-z]{40}$/)
    assert.equal(base62(1).length, 1)
    assert.equal(base62(5000).length, 5000, 'more than one pool at once')
  })
})
