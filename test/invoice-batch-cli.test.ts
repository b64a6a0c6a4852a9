import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { qpdfCheck } from './helpers/pdf.ts'
import { account, row, unzip, usage } from './helpers/invoice-batch.ts'

function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bulk-invoice.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (b) => (out += b))
    child.stderr.on('data', (b) => (out += b))
    child.on('exit', (code) => resolve({ code, out }))
  })
}

describe('scripts/bulk-invoice.ts', () => {
  let sys: TestSystem
  let dir: string
  before(async () => {
    sys = await startSystem({ services: ['invoice'] })
    dir = mkdtempSync(join(tmpdir(), 'qw-bulk-'))
  })
  after(async () => sys?.stop())

  it('submits a JSONL file, waits for the batch, saves the ZIP; a re-run follows the same batch', async function () {
    this.timeout(120_000)
    const { key } = await account(sys, 'starter')
    const file = join(dir, 'in.jsonl')
    writeFileSync(file, [row(1), row(2), row(3)].map((r) => JSON.stringify(r)).join('\n') + '\n')
    const out = join(dir, 'out.zip')
    const first = await runCli([file, '--url', sys.url.invoice, '--key', key, '--out', out, '--poll-ms', '100'])
    assert.equal(first.code, 0, first.out)
    assert.match(first.out, /3 rendered, 0 failed/)
    const entries = unzip(readFileSync(out))
    assert.equal(entries.length, 3)
    for (const e of entries) qpdfCheck(e.data)
    const again = await runCli([file, '--url', sys.url.invoice, '--key', key, '--out', out])
    assert.equal(again.code, 0, again.out)
    assert.match(again.out, /already submitted/)
    assert.equal(await usage(sys, key), 3)
  })

  it('prints the per-row report and exits 1 when the file has invalid rows', async () => {
    const { key } = await account(sys, 'starter')
    const file = join(dir, 'bad.jsonl')
    writeFileSync(file, `${JSON.stringify(row(1))}\n${JSON.stringify({ items: [{ description: 'x', quantity: -1, unit_price: 1 }] })}\n`)
    const r = await runCli([file, '--url', sys.url.invoice, '--key', key])
    assert.equal(r.code, 1)
    assert.match(r.out, /batch refused \(400\)[\s\S]*rows\[1\]\.items\[0\]\.quantity must be > 0/)
  })

  it('a refused batch prints the API error and writes no ZIP; file names are relative to where `npm run` was typed (INIT_CWD)', async () => {
    const { key } = await account(sys, 'free')
    // The free plan's 5 invoices a month cannot cover 6 rows: 429, nothing reserved.
    writeFileSync(join(dir, 'six.jsonl'), [1, 2, 3, 4, 5, 6].map((i) => JSON.stringify(row(i))).join('\n') + '\n')
    // `npm run` starts the script in the package folder and says in INIT_CWD where the user was.
    const r = await runCli(['six.jsonl', '--url', sys.url.invoice, '--key', key, '--out', 'refused.zip'], { ...process.env, INIT_CWD: dir })
    assert.equal(r.code, 1, r.out)
    assert.match(r.out, /^bulk-invoice: batch refused \(429\): Monthly limit reached: this batch needs 6 invoices but only 5 remain this month/m)
    assert.deepEqual([existsSync(join(dir, 'refused.zip')), existsSync(join(dir, 'refused.zip.part')), existsSync('refused.zip')], [false, false, false])
    assert.equal(await usage(sys, key), 0)
  })
})
