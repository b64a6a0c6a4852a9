// The running service's e-invoice reader (POST /api/v1/einvoice/read) for the corpus tests, and
// what they compare between its answer and the official rules: the findings' rule ids, and the
// calculation rules both name (the rules about amounts and their VAT breakdown).
import assert from 'node:assert/strict'
import { call } from './http.ts'
import { startSystem, type TestSystem } from './system.ts'
import { account } from './invoice-batch.ts'
import { xsdDirForService } from './einvoice.ts'
import type { RuleFinding } from './en16931-rules.ts'

export interface ReadFinding {
  rule: string
  severity: 'error' | 'warning' | 'info'
  message: string
  bt?: string
  stated?: string
  computed?: string
  path?: string
}

/**
 * The calculation rules of EN 16931 (docs/einvoice-receiving.md): the totals
 * BR-CO-10…18, and per VAT category (S, Z, E, AE, K = IC, G, O, L = AF, M = AG) its taxable
 * amount (-08) and its tax (-09).
 */
export const CALCULATION = /^BR-(?:CO-1[0-8]|(?:S|Z|E|AE|IC|G|O|AF|AG)-0[89])$/

export const calculationIds = (ids: Iterable<string>) => [...new Set([...ids].filter((id) => CALCULATION.test(id)))].sort()

/** The ids of the official rules' fatal findings. */
export const fatalIds = (findings: RuleFinding[]) => [...new Set(findings.filter((f) => f.flag === 'fatal').map((f) => f.id))].sort()

export interface Reader {
  sys: TestSystem
  read(body: Buffer | string, contentType: string): Promise<{ status: number; json: any; text: string }>
  stop(): Promise<void>
}

/** The invoice service, its XSD check on where the schemas are (as in invoice-receive.test.ts),
 *  and an account on the business plan (a corpus test reads a few hundred documents). */
export async function startReader(): Promise<Reader> {
  const envBefore = process.env.EINVOICE_XSD_DIR
  const xsdDir = xsdDirForService()
  if (xsdDir) process.env.EINVOICE_XSD_DIR = xsdDir
  const sys = await startSystem({ services: ['invoice'] })
  const { key } = await account(sys, 'business')
  const base = sys.url.invoice!
  return {
    sys,
    read: async (body, contentType) => {
      const res = await call('POST', `${base}/einvoice/read`, { raw: body, key, headers: { 'content-type': contentType } })
      return { status: res.status, json: res.json, text: res.text }
    },
    stop: async () => {
      await sys.stop()
      if (envBefore === undefined) delete process.env.EINVOICE_XSD_DIR
      else process.env.EINVOICE_XSD_DIR = envBefore
    },
  }
}

/** The read's findings, asserting the answer is a read (200 with a findings list). */
export function findingsOf(res: { status: number; json: any; text: string }, name: string): ReadFinding[] {
  assert.equal(res.status, 200, `${name}: ${res.text.slice(0, 2000)}`)
  assert.ok(Array.isArray(res.json?.findings), `${name}: no findings list in ${res.text.slice(0, 2000)}`)
  return res.json.findings
}

export const errorsOf = (findings: ReadFinding[]) => findings.filter((f) => f.severity === 'error')

/** A compact listing of findings for an assertion message. */
export const show = (findings: ReadFinding[]) => findings.map((f) => `${f.severity} ${f.rule}${f.bt ? ` ${f.bt}` : ''}${f.stated !== undefined ? ` stated ${f.stated}` : ''}${f.computed !== undefined ? ` computed ${f.computed}` : ''}: ${f.message}`).join('\n    ')
