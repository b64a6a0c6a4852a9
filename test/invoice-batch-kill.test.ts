import assert from 'node:assert/strict'
import { spawnWorker, startSystem, waitForExit, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { qpdfCheck } from './helpers/pdf.ts'
import { account, rows, submit, unzip, usage, waitFinished } from './helpers/invoice-batch.ts'

describe('invoice batches: a worker process killed mid-batch', () => {
  let sys: TestSystem
  const children: ReturnType<typeof spawnWorker>[] = []
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: false })
  })
  after(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
    await sys?.stop()
  })

  it('loses no row and counts none twice: every row is rendered after all, usage = 100', async function () {
    this.timeout(180_000)
    const { key } = await account(sys, 'starter')
    const first = spawnWorker(sys.env)
    children.push(first)
    const res = await submit(sys, key, rows(100))
    assert.equal(res.status, 202, res.text)
    // Kill it hard once a first chunk (20 rows) is stored while others render or wait, without a
    // graceful close: the killed chunks' rows are left in 'rendering'.
    for (;;) {
      const st = (await get(res.json.status_url, { key })).json
      if (st.counts.done >= 20) break
      await new Promise((r) => setTimeout(r, 50))
    }
    first.kill('SIGKILL')
    await waitForExit(first)
    const midway = (await get(res.json.status_url, { key })).json
    assert.equal(midway.status, 'processing')
    assert.ok(midway.counts.done < 100 && midway.counts.rendering > 0, `the kill came too late to prove anything: ${JSON.stringify(midway.counts)}`)

    const second = spawnWorker(sys.env)
    children.push(second)
    const st = await waitFinished(sys, key, res.json.batch_id, 150_000)
    // Every row is valid: the rows orphaned by the kill must be rendered by the second worker,
    // not written off as failed (a recovery that fails them all would otherwise pass).
    assert.equal(st.status, 'finished')
    assert.equal(st.rows.length, 100)
    assert.deepEqual(st.rows.filter((r: any) => r.state !== 'done'), [])
    assert.equal(st.counts.done, 100)
    assert.equal(st.counts.failed, 0)
    assert.equal(await usage(sys, key), 100)
    const entries = unzip((await get(st.archive_url, { key })).body)
    assert.equal(entries.length, 100)
    for (const e of entries) qpdfCheck(e.data)
    second.kill('SIGTERM')
    await waitForExit(second)
  })
})
