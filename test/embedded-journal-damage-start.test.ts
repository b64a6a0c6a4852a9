// A damaged journal with a real `start` (`tsx src/main.ts start` in its own process group, a
// temporary DATA_DIR), as an unlucky operator meets it: 12 sign-ups and the writes of a driver
// configured for zlib, kill -9 of the whole group, one byte of sign-up 6's journal record changed.
// The next start refuses (exit 1, the file and the lost record named, the way out given) and
// starts nothing; with JOURNAL_ACCEPT_DAMAGE=true it starts with sign-ups 1–5 and 7–12 and the
// driver's writes, keeps the damaged segment aside, and after its final snapshot the next start
// (without the setting) has exactly the same. `start --accept-journal-damage` is the same setting.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MongoClient } from 'mongodb'
import { parseCommand } from '../src/main.ts'
import { JOURNAL_DIR, readSegments } from '../src/embedded/journal.ts'
import { DAMAGED_DIR } from '../src/embedded/journal-recovery.ts'
import { freePorts } from './helpers/ports.ts'
import { get, post } from './helpers/http.ts'

/** A collection the snapshot saves, written by the compressing client (documents nothing else reads). */
const PROBE = 'newsletter_subscribers'
const PROBES = ['zlib-probe-1', 'zlib-probe-2', 'zlib-probe-3']

interface Run {
  proc: ChildProcess
  out: () => string
  exited: Promise<number | null>
}

describe('embedded store: a damaged journal with a real start', function () {
  this.timeout(300_000)
  let root: string
  const runs: Run[] = []
  const ports = { invoice: 0, flags: 0, webhooks: 0 }
  const invoice = () => `http://127.0.0.1:${ports.invoice}/api/v1`

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'qw-journal-start-'))
    ;[ports.invoice, ports.flags, ports.webhooks] = await freePorts(3)
  })
  after(() => {
    for (const r of runs) {
      try {
        if (r.proc.exitCode === null && r.proc.signalCode === null) process.kill(-r.proc.pid!, 'SIGKILL')
      } catch {
        /* gone */
      }
    }
    // The embedded engine and redis of each run are stopped by their guards or by the next start.
    for (const dir of readdirSync(root)) {
      try {
        for (const pid of (JSON.parse(readFileSync(join(root, dir, 'lock.json'), 'utf8')) as { children: number[] }).children) process.kill(-pid, 'SIGKILL')
      } catch {
        /* none left */
      }
    }
    rmSync(root, { recursive: true, force: true })
  })

  function start(dataDir: string, env: Record<string, string> = {}): Run {
    const clean = { ...process.env }
    for (const k of ['MONGO_URL', 'REDIS_URL', 'MONGO_DB', 'QUEUE_PREFIX', 'STRIPE_SECRET_KEY', 'STRIPE_API_BASE', 'STRIPE_WEBHOOK_SECRET', 'JOURNAL_ACCEPT_DAMAGE']) delete clean[k]
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'start'], {
      env: {
        ...clean,
        NODE_ENV: 'development',
        LOG_LEVEL: 'warn',
        DATA_DIR: dataDir,
        INVOICE_PORT: String(ports.invoice),
        FLAGS_PORT: String(ports.flags),
        WEBHOOKS_PORT: String(ports.webhooks),
        SNAPSHOT_INTERVAL_MS: '3600000', // everything stays in the journal until the stop
        SHUTDOWN_TIMEOUT_MS: '20000',
        ...env,
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    proc.stdout!.on('data', (b: Buffer) => (out += b.toString()))
    proc.stderr!.on('data', (b: Buffer) => (out += b.toString()))
    const run = { proc, out: () => out, exited: new Promise<number | null>((r) => proc.once('exit', (code) => r(code))) }
    runs.push(run)
    return run
  }
  async function ready(run: Run): Promise<string> {
    const deadline = Date.now() + 120_000
    while (!run.out().includes('queueworks is ready: invoices are served')) {
      if (run.proc.exitCode !== null) throw new Error(`start exited with ${run.proc.exitCode}:\n${run.out()}`)
      if (Date.now() > deadline) throw new Error(`start did not come up:\n${run.out()}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    return /mongo\s+(mongodb:\/\/\S+)/.exec(run.out())![1]!
  }
  const stop = async (run: Run) => {
    process.kill(-run.proc.pid!, 'SIGINT')
    return run.exited
  }
  /** Which of the sign-ups' keys the running start knows. */
  const known = async (keys: string[]) => {
    const got: number[] = []
    for (const [i, key] of keys.entries()) {
      const res = await get(`${invoice()}/usage`, { key })
      assert.ok(res.status === 200 || res.status === 401, res.text)
      if (res.status === 200) got.push(i + 1)
    }
    return got
  }
  const probeIds = async (mongoUrl: string) => {
    const c = await new MongoClient(mongoUrl).connect()
    try {
      return (await c.db('queueworks').collection<{ _id: string }>(PROBE).find({ _id: /^zlib-probe-/ }).toArray()).map((d) => d._id).sort()
    } finally {
      await c.close()
    }
  }

  it('the setting has a flag too', () => {
    assert.deepEqual(parseCommand(['start', '--accept-journal-damage']), { cmd: 'start', ephemeral: false, acceptJournalDamage: true })
    assert.deepEqual(parseCommand(['start']), { cmd: 'start', ephemeral: false, acceptJournalDamage: false })
  })

  it('12 sign-ups, kill -9, one byte of sign-up 6 changed: refused with the file named; accepted: 1–5 and 7–12, the segment kept aside, and so after a snapshot', async () => {
    const dir = join(root, 'data')
    const first = start(dir)
    const mongoUrl = await ready(first)
    const keys: string[] = []
    for (let i = 1; i <= 12; i++) {
      const res = await post(`${invoice()}/signup`, { email: `damage-${i}@example.com` })
      assert.equal(res.status, 200, res.text)
      keys.push(res.json.api_key)
    }
    // A client of the store that asks for compression: its writes are journaled like any other.
    const zlib = await new MongoClient(mongoUrl, { compressors: ['zlib'] }).connect()
    for (let n = 1; n <= 3; n++) await zlib.db('queueworks').collection<{ _id: string }>(PROBE).insertOne({ _id: `zlib-probe-${n}` })
    await zlib.close()
    process.kill(-first.proc.pid!, 'SIGKILL')
    await first.exited

    // One byte in the middle of sign-up 6's record.
    const segs = readSegments(dir)
    const hits = segs.flatMap((seg) => seg.records.filter((r) => r.m.includes(Buffer.from('damage-6@example.com'))).map((r) => ({ seg, r })))
    assert.equal(hits.length, 1)
    const { seg, r } = hits[0]!
    const bytes = readFileSync(seg.file)
    bytes[r.at + Math.floor((r.end - r.at) / 2)]! ^= 0x20
    writeFileSync(seg.file, bytes)

    const refused = start(dir)
    assert.equal(await refused.exited, 1, refused.out())
    assert.ok(refused.out().includes(`the write journal in ${join(dir, JOURNAL_DIR)} is damaged`), refused.out())
    assert.ok(refused.out().includes(seg.file), refused.out())
    assert.match(refused.out(), new RegExp(`it fails its CRC-32 check .*; record ${r.s} lost \\(the whole record before is ${r.s - 1}, the next is ${r.s + 1}\\)`))
    assert.match(refused.out(), /set JOURNAL_ACCEPT_DAMAGE=true \(or run start --accept-journal-damage\)/)
    assert.ok(!refused.out().includes('Press Ctrl-C'), 'nothing started')
    await assert.rejects(fetch(`${invoice()}/usage`), 'nothing listens')
    assert.deepEqual(readFileSync(seg.file), bytes, 'the refused start changed nothing')

    const accepted = start(dir, { JOURNAL_ACCEPT_DAMAGE: 'true' })
    const url2 = await ready(accepted)
    assert.match(accepted.out(), /the write journal was damaged and JOURNAL_ACCEPT_DAMAGE=true accepts the loss/)
    assert.deepEqual(await known(keys), [1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12])
    assert.deepEqual(await probeIds(url2), PROBES)
    assert.equal(await stop(accepted), 0, accepted.out())
    const aside = readdirSync(join(dir, DAMAGED_DIR))
    assert.equal(aside.length, 1)
    assert.deepEqual(readFileSync(join(dir, DAMAGED_DIR, aside[0]!)), bytes, 'kept aside as found, after the snapshot dropped the segment')
    assert.equal(readdirSync(join(dir, JOURNAL_DIR)).includes(seg.file.split('/').at(-1)!), false)

    const again = start(dir)
    assert.deepEqual(await probeIds(await ready(again)), PROBES)
    assert.doesNotMatch(again.out(), /damaged/)
    assert.deepEqual(await known(keys), [1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12])
    assert.equal(await stop(again), 0, again.out())
    // Everything our own code sends is journaled or passed on: the proxy refused none of it.
    for (const r of [first, accepted, again]) assert.doesNotMatch(r.out(), /refused a message its write journal cannot keep/)
  })
})
