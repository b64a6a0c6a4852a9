// The wire framer of the journal proxy: messages however the socket cuts them, and large replies
// gathered without copying them again at every read.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { MessageFramer } from '../src/embedded/wire.ts'

const message = (bodyBytes: number): Buffer => {
  const m = Buffer.concat([Buffer.alloc(16), randomBytes(bodyBytes)])
  m.writeInt32LE(m.length, 0)
  return m
}

describe('embedded store: wire framing', () => {
  it('gives back every message whole and in order, whatever the cut points (one byte at a time too)', () => {
    const msgs = [message(0), message(5), message(300), message(70_000), message(1)]
    const stream = Buffer.concat(msgs)
    for (const step of [1, 3, 7, 64, 4096, 65_536, stream.length]) {
      const f = new MessageFramer()
      const got: Buffer[] = []
      for (let at = 0; at < stream.length; at += step) got.push(...f.push(stream.subarray(at, at + step)))
      assert.equal(got.length, msgs.length, `step ${step}`)
      got.forEach((m, i) => assert.ok(m.equals(msgs[i]!), `step ${step}, message ${i}`))
    }
  })

  it('a 48 MB reply in 64 KiB reads is one message, and no read joins more than it must', () => {
    const big = message(48 << 20)
    const f = new MessageFramer()
    let out: Buffer[] = []
    let joins = 0
    const concat = Buffer.concat
    Buffer.concat = ((list: readonly Uint8Array[], total?: number) => (joins++, concat(list, total))) as typeof Buffer.concat
    try {
      for (let at = 0; at < big.length; at += 65_536) out = out.concat(f.push(big.subarray(at, at + 65_536)))
    } finally {
      Buffer.concat = concat
    }
    assert.equal(out.length, 1)
    assert.ok(out[0]!.equals(big))
    // Joined once when complete (the old framer joined at each of the 769 reads).
    assert.ok(joins <= 2, `${joins} joins`)
  })

  it('refuses a length smaller than a message header instead of looping on it', () => {
    const bad = Buffer.alloc(16)
    bad.writeInt32LE(0, 0)
    assert.throws(() => new MessageFramer().push(bad), /malformed wire message length 0/)
  })
})
