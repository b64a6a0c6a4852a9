// Submit a file of invoices as one batch, follow it with a progress bar, download the ZIP of
// PDFs and print the failures. Safe to re-run: the Idempotency-Key is derived from the file, so
// a re-run after a lost connection picks up the same batch instead of rendering (and paying) twice.
//
//   npm run bulk-invoice -- invoices.jsonl [--url http://127.0.0.1:3001/api/v1] [--key dm_…]
//                           [--out batch.zip] [--callback-url https://…] [--idempotency-key K]
//
// INVOICE_URL and INVOICE_API_KEY may be given in the environment instead of --url and --key.
// Exit status: 0 all rows rendered, 2 some rows failed, 1 the batch could not be submitted or its
// archive not downloaded. Output is a file only when the answer is the file: an error is printed,
// and the ZIP is written under FILE.zip.part and renamed once complete (docs/bulk.md).
import { createHash } from 'node:crypto'
import { createWriteStream, readFileSync, renameSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import cliProgress from 'cli-progress'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string', default: process.env.INVOICE_URL ?? 'http://127.0.0.1:3001/api/v1' },
    key: { type: 'string', default: process.env.INVOICE_API_KEY },
    out: { type: 'string' },
    'callback-url': { type: 'string' },
    'idempotency-key': { type: 'string' },
    'poll-ms': { type: 'string', default: '500' },
  },
})

// `npm run` starts scripts in the package's folder; INIT_CWD is where the user typed the command,
// which is what the file names on the command line are relative to.
const here = (path: string) => resolve(process.env.INIT_CWD ?? process.cwd(), path)

/** The error an answer carries (`{"error": …}` of the API), else its status text. */
async function errorOf(res: Response): Promise<string> {
  const text = await res.text().catch(() => '')
  try {
    const body = JSON.parse(text) as { error?: unknown }
    if (typeof body.error === 'string') return body.error
  } catch {
    /* not JSON */
  }
  return text.trim().slice(0, 500) || res.statusText
}

function die(msg: string): never {
  console.error(`bulk-invoice: ${msg}`)
  process.exit(1)
}

async function main() {
  const file = positionals[0]
  if (!file) die('usage: bulk-invoice FILE.jsonl [--url URL] [--key API_KEY] [--out FILE.zip] [--callback-url URL]')
  if (!values.key) die('an API key is required (--key or INVOICE_API_KEY)')
  const body = readFileSync(here(file))
  const base = values.url!.replace(/\/+$/, '')
  const auth = { authorization: `Bearer ${values.key}` }
  const idemKey = values['idempotency-key'] ?? `bulk-${createHash('sha256').update(body).update(values['callback-url'] ?? '').digest('hex').slice(0, 40)}`
  const query = values['callback-url'] ? `?callback_url=${encodeURIComponent(values['callback-url'])}` : ''

  const res = await fetch(`${base}/invoices/batch${query}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/x-ndjson', 'idempotency-key': idemKey },
    body,
  })
  const accepted = (await res.json().catch(() => ({}))) as any
  if (res.status !== 202) {
    const detail = Array.isArray(accepted.errors) ? `\n  ${accepted.errors.join('\n  ')}` : ''
    die(`batch refused (${res.status}): ${accepted.error ?? res.statusText}${detail}`)
  }
  const replayed = res.headers.get('idempotent-replayed') === 'true'
  console.log(`batch ${accepted.batch_id}: ${accepted.total} invoices${replayed ? ' (already submitted; following it)' : ''}`)
  if (accepted.callback_secret) console.log(`callback signing secret: ${accepted.callback_secret}`)

  const bar = new cliProgress.SingleBar(
    { format: 'rendering [{bar}] {percentage}% | {value}/{total} | done {done} failed {failed}', hideCursor: true },
    cliProgress.Presets.shades_classic,
  )
  bar.start(accepted.total, 0, { done: 0, failed: 0 })
  let status: any
  for (;;) {
    const r = await fetch(accepted.status_url, { headers: auth })
    if (!r.ok) {
      bar.stop()
      die(`status request failed (${r.status}): ${await errorOf(r)}`)
    }
    status = await r.json()
    bar.update(status.counts.done + status.counts.failed, { done: status.counts.done, failed: status.counts.failed })
    if (status.status === 'finished') break
    await new Promise((resolve) => setTimeout(resolve, Number(values['poll-ms'])))
  }
  bar.stop()

  const out = here(values.out ?? `batch-${accepted.batch_id}.zip`)
  const zip = await fetch(accepted.archive_url, { headers: auth })
  if (!zip.ok || !zip.body) die(`archive download failed (${zip.status}): ${await errorOf(zip)}; nothing written to ${out}`)
  // A download cut short never leaves a truncated ZIP under the name the user asked for.
  const part = `${out}.part`
  try {
    await pipeline(Readable.fromWeb(zip.body as any), createWriteStream(part))
    renameSync(part, out)
  } catch (err) {
    rmSync(part, { force: true })
    die(`archive download failed: ${(err as Error).message}; nothing written to ${out}`)
  }

  const failed = status.rows.filter((r: any) => r.state === 'failed')
  console.log(`done: ${status.counts.done} rendered, ${failed.length} failed; PDFs in ${out}`)
  for (const r of failed.slice(0, 50)) console.log(`  row ${r.row} (line ${r.row + 1} of the non-blank lines): ${r.error}`)
  if (failed.length > 50) console.log(`  … and ${failed.length - 50} more (see ${accepted.status_url})`)
  process.exit(failed.length ? 2 : 0)
}

main().catch((err) => die(err instanceof Error ? err.message : String(err)))
