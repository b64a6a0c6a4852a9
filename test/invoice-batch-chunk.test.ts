// One invoice-batch-render job's work (src/invoice/batch/render-batch-chunk.ts), run directly against
// the embedded engine: a chunk renders exactly its range of rows, stores each PDF where
// GET /invoices/{id} finds it, skips rows already done when it runs again, and replaces a PDF
// left behind by an earlier attempt that died before marking its rows done. A row that cannot be
// rendered for a reason other than bad input makes the chunk retry, keeping what it rendered; on
// the last attempt that row fails alone and the others still render.
import assert from 'node:assert/strict'
import { Binary } from 'mongodb'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get } from './helpers/http.ts'
import { pdfText } from './helpers/pdf.ts'
import { account, rows, submit, usage } from './helpers/invoice-batch.ts'
import { renderBatchChunk } from '../src/invoice/batch/render-batch-chunk.ts'
import { insertPdfs, pdfs } from '../src/invoice/store/pdf-store.ts'
import { invoices } from '../src/invoice/store/invoice-store.ts'

describe('invoice batches: rendering one chunk of rows', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['invoice'], workers: false })
  })
  after(async () => sys?.stop())

  it("renders its range only, serves each row's PDF by id, and never renders a done row again", async () => {
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, rows(25))
    assert.equal(res.status, 202, res.text)
    const batchId = res.json.batch_id as string
    const opts = { jobId: `${batchId}-0`, finalAttempt: false, threads: 1 }

    const first = await renderBatchChunk(sys.platform, { batch_id: batchId, from: 0, to: 20 }, opts)
    assert.deepEqual([first.state, first.rendered, first.failed], ['done', 20, 0])
    const st = (await get(res.json.status_url, { key })).json
    assert.deepEqual(st.counts, { queued: 5, rendering: 0, done: 20, failed: 0 })
    assert.deepEqual(
      st.rows.filter((r: any) => r.state === 'done').map((r: any) => r.row),
      Array.from({ length: 20 }, (_, i) => i),
    )
    const row7 = await invoices(sys.platform.db, batchId).findOne({ batch_id: batchId, row: 7 })
    assert.equal(row7!.job_id, `${batchId}-0`, 'the row records the chunk job that rendered it')
    assert.equal(row7!.pdf, undefined, "a batch row's PDF is not on the row")
    const pdf = await get(`${sys.url.invoice}/invoices/${row7!._id}`, { key })
    assert.equal(pdf.status, 200)
    assert.match(pdfText(pdf.body), /INV-1007/)

    const again = await renderBatchChunk(sys.platform, { batch_id: batchId, from: 0, to: 20 }, opts)
    assert.deepEqual([again.state, again.rendered], ['skipped', 0])
    assert.equal(await pdfs(sys.platform.db, batchId).countDocuments({ batch_id: batchId }), 20)
  })

  it('replaces a PDF stored by an attempt that died before marking its rows done', async () => {
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, rows(3, 50))
    const batchId = res.json.batch_id as string
    const first = await invoices(sys.platform.db, batchId).findOne({ batch_id: batchId, row: 0 })
    // What a killed attempt leaves: the PDF stored, the row still open.
    await invoices(sys.platform.db, first!._id).updateOne({ _id: first!._id }, { $set: { status: 'rendering' } })
    const junk = Buffer.from('not a pdf')
    await insertPdfs(sys.platform.db, [
      { _id: first!._id, account_id: first!.account_id, batch_id: batchId, pdf: new Binary(junk), size_bytes: junk.length, render_ms: 1, rendered_at: new Date(), created_at: first!.created_at },
    ])

    const out = await renderBatchChunk(sys.platform, { batch_id: batchId, from: 0, to: 20 }, { jobId: `${batchId}-0`, finalAttempt: false, threads: 1 })
    assert.deepEqual([out.state, out.rendered], ['done', 3])
    const pdf = await get(`${sys.url.invoice}/invoices/${first!._id}`, { key })
    assert.equal(pdf.status, 200)
    assert.match(pdfText(pdf.body), /INV-1050/)
    assert.equal(await pdfs(sys.platform.db, batchId).countDocuments({ batch_id: batchId }), 3)
  })

  it('stores what it rendered before a failing row and retries; on the last attempt only that row fails', async () => {
    const { key } = await account(sys, 'starter')
    const res = await submit(sys, key, rows(4, 70))
    const batchId = res.json.batch_id as string
    // A stored request the worker cannot use: not the client's doing (it was valid when accepted).
    await invoices(sys.platform.db, batchId).updateOne({ batch_id: batchId, row: 1 }, { $set: { 'request.items': [] } })
    const chunk = { batch_id: batchId, from: 0, to: 20 }
    const states = async () => (await get(res.json.status_url, { key })).json.rows.map((r: any) => r.state)
    assert.equal(await usage(sys, key), 4)

    await assert.rejects(renderBatchChunk(sys.platform, chunk, { jobId: `${batchId}-0`, finalAttempt: false, threads: 1 }))
    assert.deepEqual(await states(), ['done', 'rendering', 'rendering', 'rendering'], 'row 0 kept, the rest left for the retry')
    assert.equal(await usage(sys, key), 4)

    const last = await renderBatchChunk(sys.platform, chunk, { jobId: `${batchId}-0`, finalAttempt: true, threads: 1 })
    assert.deepEqual([last.rendered, last.failed], [2, 1])
    const st = (await get(res.json.status_url, { key })).json
    assert.deepEqual(st.rows.map((r: any) => r.state), ['done', 'failed', 'done', 'done'])
    assert.equal(st.rows[1].error, 'The invoice could not be rendered. Please retry.')
    assert.equal(await usage(sys, key), 3, "the failed row's unit is released")
    assert.equal(await pdfs(sys.platform.db, batchId).countDocuments({ batch_id: batchId }), 3)
  })
})
