// bench:embedded-restore — how long does `npm start` take to come back from a large snapshot?
// Fills an embedded engine with the shape of the store bench:embedded leaves behind (by default
// 100,000 captures over the capture slots, 20,000 invoices and 20,000 PDFs of ~6 KB over theirs:
// BENCH_RESTORE_CAPTURES, BENCH_RESTORE_INVOICES), writes a snapshot, then restores it into fresh
// engines twice and creates the indexes as a start does:
//   reference: one collection at a time in batches of 1,000, indexes one collection at a time
//              (how start did it before);
//   current:   restoreSnapshot's and ensureIndexes' defaults.
// One restore first warms up (not counted). Prints each time and the ratio (reference / current),
// and checks every document came back.
import { benchDir, benchMongo } from './lib/bench-env.ts'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Binary, MongoClient, type Db } from 'mongodb'
import { execSync } from 'node:child_process'
import { readSnapshot, restoreSnapshot, writeSnapshot, collectionsToSave } from '../../src/embedded/snapshot.ts'
import { ensureIndexes } from '../../src/platform/store/mongo.ts'
import { loadLayouts, partitioned } from '../../src/platform/store/partitioned.ts'
import { ALL_COLLECTIONS, ALL_INDEXES } from '../../src/collections.ts'
import { runBench } from './lib/run.ts'
import { writeBenchSection } from './lib/report.ts'

const CAPTURES = Number(process.env.BENCH_RESTORE_CAPTURES ?? 100_000)
const INVOICES = Number(process.env.BENCH_RESTORE_INVOICES ?? 20_000)
const DB = 'queueworks'
const wanted = () => Object.fromEntries(ALL_INDEXES.filter((s) => s.partitions).map((s) => [s.collection, s.partitions!]))

async function withEngine<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const engine = await benchMongo()
  const client = new MongoClient(engine.url)
  await client.connect()
  try {
    return await fn(client.db(DB))
  } finally {
    await client.close()
    await engine.child.stop()
  }
}

async function fill(db: Db): Promise<void> {
  await loadLayouts(db, wanted())
  const caps = partitioned(db, 'webhook_captures')
  const bySlot = new Map<number, object[]>()
  for (let id = 1; id <= CAPTURES; id++) {
    const slot = caps.slotOf('benchtoken', Math.floor(id / 128))
    const now = new Date()
    const doc = {
      _id: `benchtoken.${id}`, endpoint_id: 'benchtoken', account_id: 'acct', id, method: 'POST', path: '/hook/benchtoken', sub_path: '', query: '',
      headers: { 'content-type': 'application/json', host: '127.0.0.1', 'user-agent': 'bench', 'content-length': '80' },
      raw_headers: ['Content-Type', 'application/json', 'Host', '127.0.0.1', 'User-Agent', 'bench', 'Content-Length', '80'],
      content_type: 'application/json', ip_address: '127.0.0.1', size_bytes: 80, received_at: now, expires_at: new Date(now.getTime() + 86_400_000),
      body: new Binary(Buffer.from(JSON.stringify({ event: 'order.paid', n: id, amount: 4200, currency: 'EUR' }))), search_text: `{"event":"order.paid","n":${id}}`,
    }
    bySlot.set(slot, [...(bySlot.get(slot) ?? []), doc])
  }
  for (const [slot, docs] of bySlot) await caps.at(slot).insertMany(docs)
  const inv = partitioned(db, 'invoices')
  const pdfs = partitioned(db, 'invoice_pdfs')
  const pdf = Buffer.alloc(6_000, 7)
  for (let i = 0; i < INVOICES; i += 1_000) {
    const invSlots = new Map<number, object[]>()
    const pdfSlots = new Map<number, object[]>()
    for (let j = i; j < Math.min(INVOICES, i + 1_000); j++) {
      const id = `inv${String(j).padStart(9, '0')}`
      const s = inv.slotOf(id.slice(0, 8) + j)
      invSlots.set(s, [...(invSlots.get(s) ?? []), { _id: id, account_id: 'acct', status: 'done', created_at: new Date(), request: { items: [{ description: 'Consulting', quantity: 10, unit_price: 120 }], tax_rate: 19 } }])
      pdfSlots.set(s, [...(pdfSlots.get(s) ?? []), { _id: id, pdf: new Binary(pdf) }])
    }
    for (const [s, docs] of invSlots) await inv.at(s).insertMany(docs)
    for (const [s, docs] of pdfSlots) await pdfs.at(s).insertMany(docs)
  }
}

async function restoreOnce(dir: string, reference: boolean): Promise<{ restoreMs: number; indexMs: number; docs: number }> {
  const snap = await readSnapshot(dir)
  return withEngine(async (db) => {
    let t = performance.now()
    const docs = await restoreSnapshot(db, snap, reference ? { parallel: 1, batch: 1_000 } : {})
    const restoreMs = performance.now() - t
    t = performance.now()
    await loadLayouts(db, wanted())
    await ensureIndexes(db, ALL_INDEXES, { embedded: true, parallel: reference ? 1 : undefined })
    const indexMs = performance.now() - t
    const back = await partitioned(db, 'webhook_captures').countDocuments()
    if (back !== CAPTURES) throw new Error(`restored ${back} captures of ${CAPTURES}`)
    return { restoreMs, indexMs, docs }
  })
}

async function main(): Promise<void> {
  const dir = benchDir('restore')
  try {
    const load = execSync('uptime').toString().trim()
    console.log(load)
    const manifest = await withEngine(async (db) => {
      await fill(db)
      return writeSnapshot(db, await collectionsToSave(db, ALL_COLLECTIONS), join(dir, 'snapshot'))
    })
    const docs = manifest.collections.reduce((n, c) => n + c.count, 0)
    const mb = manifest.collections.reduce((n, c) => n + c.bytes, 0) / 1e6
    console.log(`snapshot: ${docs} documents in ${manifest.collections.length} collections, ${mb.toFixed(0)} MB`)
    // Warm-up restore (not counted): the first reading of the snapshot's files and the first engine
    // of the run would otherwise fall on whichever method goes first.
    await restoreOnce(join(dir, 'snapshot'), false)
    const ref = await restoreOnce(join(dir, 'snapshot'), true)
    console.log(`reference: restore ${(ref.restoreMs / 1000).toFixed(1)} s, indexes ${(ref.indexMs / 1000).toFixed(1)} s`)
    const cur = await restoreOnce(join(dir, 'snapshot'), false)
    console.log(`current:   restore ${(cur.restoreMs / 1000).toFixed(1)} s, indexes ${(cur.indexMs / 1000).toFixed(1)} s`)
    const ratio = (ref.restoreMs + ref.indexMs) / (cur.restoreMs + cur.indexMs)
    console.log(`ratio (reference / current, restore + indexes): ${ratio.toFixed(2)}`)
    const end = execSync('uptime').toString().trim()
    writeBenchSection(
      [
        '## Embedded store: start from a large snapshot (`npm run bench:embedded-restore`)',
        '',
        `${new Date().toISOString().slice(0, 16)}Z, this machine (2 cores shared). Load: \`${load}\` at the start, \`${end}\` at the end.`,
        `After one warm-up restore (not counted). Snapshot: ${docs.toLocaleString('en-US')} documents (${CAPTURES.toLocaleString('en-US')} captures, ${INVOICES.toLocaleString('en-US')} invoices and their ~6 KB PDFs) in ${manifest.collections.length} collections, ${mb.toFixed(0)} MB; each restored into a fresh engine, then the start's layouts and indexes.`,
        '',
        '| method | restore | indexes | total |',
        '|---|---|---|---|',
        `| reference: one collection at a time, batches of 1,000; indexes one collection at a time | ${(ref.restoreMs / 1000).toFixed(1)} s | ${(ref.indexMs / 1000).toFixed(1)} s | ${((ref.restoreMs + ref.indexMs) / 1000).toFixed(1)} s |`,
        `| current: 8 collections at once, batches up to 10,000; indexes 8 collections at once | ${(cur.restoreMs / 1000).toFixed(1)} s | ${(cur.indexMs / 1000).toFixed(1)} s | ${((cur.restoreMs + cur.indexMs) / 1000).toFixed(1)} s |`,
        '',
        `Ratio reference / current: ${ratio.toFixed(2)}.`,
        '',
      ].join('\n'),
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

runBench(main)
