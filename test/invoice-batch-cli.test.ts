import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { qpdfCheck } from './helpers/pdf.ts'
import { account, row, unzip, usage } from './helpers/invoice-batch.ts'

function runCli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/bulk-invoice.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
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
})
