// A clean stop keeps what the flags service counted since its last usage flush (up to
// FLAGS_USAGE_FLUSH_MS, 60 s by default): the app's close flushes, and the stop awaits it before
// the platform's store connection closes (src/serve.ts appClosed; a bench once logged that flush
// failing against a closed store).
import assert from 'node:assert/strict'
import { MongoClient } from 'mongodb'
import { startSystem } from './helpers/system.ts'
import { post } from './helpers/http.ts'
import { flagsAccount } from './helpers/flags.ts'
import type { UsageDoc } from '../src/flags/store/usage-store.ts'

describe('flags: usage counted since the last flush survives a clean stop', function () {
  this.timeout(60_000)

  it('7 evaluations, no periodic flush, stop: the 7 are stored', async () => {
    // The longest flush interval: only the stop's own flush can store these counts.
    const sys = await startSystem({ services: ['flags'], workers: false, env: { FLAGS_USAGE_FLUSH_MS: '300000' } })
    const dbName = sys.platform.db.databaseName
    let client: MongoClient | undefined
    try {
      const t = await flagsAccount(sys, 'business')
      assert.equal((await post(`${t.project}/flags`, { key: 'at-stop', type: 'boolean', enabled: true, default_value: false, rules: [] }, { key: t.apiKey })).status, 201)
      for (let i = 0; i < 7; i++) assert.equal((await post(`${sys.url.flags}/ofrep/v1/evaluate/flags/at-stop`, { context: {} }, { key: t.sdkKey })).status, 200)
    } finally {
      await sys.stop()
    }
    try {
      client = await MongoClient.connect(sys.env.MONGO_URL!)
      const docs = await client.db(dbName).collection<UsageDoc>('flag_usage').find({ flag: 'at-stop' }).toArray()
      const counted = docs.reduce((n, d) => n + Object.values(d.service ?? {}).reduce((a, b) => a + b, 0), 0)
      assert.equal(counted, 7)
    } finally {
      await client?.close()
    }
  })
})
