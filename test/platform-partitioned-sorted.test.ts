// Partitioned.findSorted: the first N documents of all slots together, in order, also when the
// documents are spread unevenly (one slot holds most of a page and is asked again and again).
import assert from 'node:assert/strict'
import { Partitioned } from '../src/platform/store/partitioned.ts'
import { base62 } from '../src/platform/ids.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

interface Doc {
  _id: string
  group: string
}

describe('platform: partitioned findSorted', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: [], workers: false })
  })
  after(async () => {
    await sys?.stop()
  })

  it('matches one sort over every document, for each limit, filter and direction', async () => {
    const p = new Partitioned<Doc>(sys.platform.db, `sorted_${base62(6)}`, 5)
    const docs: Doc[] = []
    for (let i = 0; i < 150; i++) docs.push({ _id: base62(10), group: i % 3 === 0 ? 'a' : 'b' })
    for (const d of docs) await p.of(d._id).insertOne(d)
    // 60 more in one slot only: the newest of the page all come from it.
    for (let i = 0; i < 60; i++) {
      const d = { _id: `zz${base62(8)}`, group: 'a' }
      docs.push(d)
      await p.at(2).insertOne(d)
    }
    const ids = (list: Doc[]) => list.map((d) => d._id)
    for (const direction of [-1, 1] as const) {
      for (const limit of [1, 7, 50, 200, 500]) {
        for (const group of [undefined, 'a']) {
          const want = docs.filter((d) => !group || d.group === group).sort((x, y) => (x._id < y._id ? -direction : x._id > y._id ? direction : 0)).slice(0, limit)
          const got = await p.findSorted(group ? { group } : {}, '_id', direction, limit)
          assert.deepEqual(ids(got), ids(want), `direction ${direction}, limit ${limit}, group ${group}`)
        }
      }
    }
    assert.deepEqual(await p.findSorted({ group: 'none' }, '_id', -1, 10), [])
  })
})
