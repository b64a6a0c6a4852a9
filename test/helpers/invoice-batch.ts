// Shared by the batch and idempotency tests: accounts on a chosen plan, invoice rows, batch
// submission, waiting for a batch to finish, and reading a ZIP with python3's zipfile module.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setPlan } from '../../src/platform/accounts.ts'
import { findAccountByKey } from '../../src/platform/accounts.ts'
import type { Plan } from '../../src/platform/plans.ts'
import type { TestSystem } from './system.ts'
import { call, get, post, type Res } from './http.ts'

let n = 0
export async function account(sys: TestSystem, plan: Plan = 'free'): Promise<{ key: string; id: string }> {
  const r = await post(`${sys.url.invoice}/signup`, { email: `batch${++n}-${Date.now()}@example.com` })
  assert.equal(r.status, 200, r.text)
  const acc = (await findAccountByKey(sys.platform.db, 'invoice', r.json.api_key))!
  if (plan !== 'free') await setPlan(sys.platform.db, acc._id, plan)
  return { key: r.json.api_key, id: acc._id }
}

export function row(i: number, extra: Record<string, unknown> = {}) {
  return { invoice_number: `INV-${1000 + i}`, to: { name: `Customer ${i}` }, items: [{ description: `Service ${i}`, quantity: 1, unit_price: 10 + i }], ...extra }
}

export const rows = (count: number, from = 0) => Array.from({ length: count }, (_, i) => row(from + i))

export function submit(sys: TestSystem, key: string, body: unknown[], opts: { query?: string; headers?: Record<string, string> } = {}): Promise<Res> {
  return post(`${sys.url.invoice}/invoices/batch${opts.query ?? ''}`, body, { key, headers: opts.headers })
}

export function submitNdjson(sys: TestSystem, key: string, lines: string[], headers: Record<string, string> = {}): Promise<Res> {
  return call('POST', `${sys.url.invoice}/invoices/batch`, { raw: lines.join('\n') + '\n', key, headers: { 'content-type': 'application/x-ndjson', ...headers } })
}

export async function usage(sys: TestSystem, key: string): Promise<number> {
  return (await get(`${sys.url.invoice}/usage`, { key })).json.invoices_this_month
}

export async function waitFinished(sys: TestSystem, key: string, batchId: string, timeoutMs = 90_000): Promise<any> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const r = await get(`${sys.url.invoice}/invoices/batch/${batchId}`, { key })
    assert.equal(r.status, 200, r.text)
    if (r.json.status === 'finished') return r.json
    if (Date.now() > until) assert.fail(`batch ${batchId} did not finish: ${JSON.stringify(r.json.counts)}`)
    await new Promise((res) => setTimeout(res, 250))
  }
}

/** Entries of a ZIP, extracted by python3's zipfile (an independent reader). */
export function unzip(buf: Buffer): { name: string; data: Buffer }[] {
  const dir = mkdtempSync(join(tmpdir(), 'qw-zip-'))
  writeFileSync(join(dir, 'a.zip'), buf)
  execFileSync('python3', ['-m', 'zipfile', '-t', join(dir, 'a.zip')], { stdio: 'pipe' })
  execFileSync('python3', ['-m', 'zipfile', '-e', join(dir, 'a.zip'), join(dir, 'out')], { stdio: 'pipe' })
  let names: string[] = []
  try {
    names = readdirSync(join(dir, 'out')).sort()
  } catch {
    names = []
  }
  return names.map((name) => ({ name, data: readFileSync(join(dir, 'out', name)) }))
}
