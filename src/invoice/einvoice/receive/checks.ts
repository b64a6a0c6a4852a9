// The checks run on a received e-invoice (docs/einvoice.md, "Receiving e-invoices"): XSD validity
// with xmllint when schemas are configured, the request rules this service enforces when it writes
// an e-invoice (VAT categories and rates, required terms), and the EN 16931 calculation rules
// BR-CO-10…18 recomputed from the document's lines and compared with the totals it states.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { invoiceBodySchema } from '../../invoice-schema.ts'
import { currencyExponent, decimalString } from '../../model/money.ts'
import { computeVat } from '../../model/vat.ts'
import type { ReceivedInvoice } from './received.ts'

export interface Finding {
  rule: string
  severity: 'error' | 'warning' | 'info'
  message: string
  path?: string
}

/** Root schema of each syntax under EINVOICE_XSD_DIR (the layout the tests use). */
const XSD_OF: Record<string, string> = {
  cii: 'cii-d16b/CrossIndustryInvoice_100pD16B.xsd',
  Invoice: 'ubl-2.1/maindoc/UBL-Invoice-2.1.xsd',
  CreditNote: 'ubl-2.1/maindoc/UBL-CreditNote-2.1.xsd',
}

/** xmllint gets at most `timeoutMs` (what is left of the read's deadline); cut short, it reports so. */
export async function xsdFindings(xml: string, schema: 'cii' | 'Invoice' | 'CreditNote', timeoutMs = 20_000): Promise<Finding[]> {
  const dir = process.env.EINVOICE_XSD_DIR
  if (!dir) return [{ rule: 'XSD', severity: 'info', message: 'XSD validation not run: EINVOICE_XSD_DIR is not set' }]
  const work = await mkdtemp(join(tmpdir(), 'einvoice-read-'))
  try {
    const file = join(work, 'doc.xml')
    await writeFile(file, xml)
    // --nonet: schema imports resolve from the local directory only; the document has no DTD (refused earlier).
    const out = await new Promise<{ code: number | null; stderr: string; missing: boolean; killed: boolean }>((resolve) => {
      execFile('xmllint', ['--noout', '--nonet', '--schema', join(dir, XSD_OF[schema]!), file], { timeout: Math.max(1, timeoutMs), maxBuffer: 1 << 20 }, (err, _o, stderr) => {
        const e = err as { code?: number | string; killed?: boolean } | null
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, stderr: String(stderr), missing: e?.code === 'ENOENT', killed: !!e?.killed })
      })
    })
    if (out.missing) return [{ rule: 'XSD', severity: 'info', message: 'XSD validation not run: xmllint is not installed' }]
    // Killed at the deadline: said, so an unfinished check never reads as a passed one.
    if (out.killed) return [{ rule: 'XSD', severity: 'warning', message: `XSD validation did not finish within the read's deadline (${Math.round(timeoutMs / 1000)} s left; the service is busy): the schema was not checked` }]
    if (out.code === 0) return []
    return out.stderr
      .split('\n')
      .filter((l) => l.includes('validity error') || l.includes('parser error'))
      .slice(0, 50)
      .map((l) => ({ rule: 'XSD', severity: 'error' as const, message: l.replace(/^[^:]*doc\.xml:/, 'line ') }))
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

/** The request rules and the calculation rules; the request is what the document was read into. */
export function ruleFindings(received: ReceivedInvoice): Finding[] {
  const findings: Finding[] = []
  const parsed = invoiceBodySchema.safeParse(received.request)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) findings.push({ rule: 'request', severity: 'error', message: issue.message, path: issue.path.join('.') || undefined })
    return findings
  }
  const req = parsed.data
  const exp = req.currency ? currencyExponent(req.currency) : 2
  const vat = computeVat(req, exp)
  const s = received.stated
  const compare = (rule: string, bt: string, stated: string | undefined, computed: bigint, optional = false) => {
    if (stated === undefined) {
      if (!optional || computed !== 0n) findings.push({ rule, severity: 'error', message: `${bt} is missing; computed ${decimalString(computed, exp)}` })
      return
    }
    if (Number(stated) !== Number(decimalString(computed, exp))) findings.push({ rule, severity: 'error', message: `${bt} states ${stated}, computed from the lines ${decimalString(computed, exp)}` })
  }
  compare('BR-CO-10', 'BT-106 (sum of line net amounts)', s.BT106, vat.subtotal)
  compare('BR-CO-11', 'BT-107 (sum of allowances)', s.BT107, vat.allowanceTotal, true)
  compare('BR-CO-12', 'BT-108 (sum of charges)', s.BT108, vat.chargeTotal, true)
  compare('BR-CO-13', 'BT-109 (total without VAT)', s.BT109, vat.taxable)
  compare('BR-CO-14', 'BT-110 (total VAT)', s.BT110, vat.tax)
  compare('BR-CO-15', 'BT-112 (total with VAT)', s.BT112, vat.total)
  // BR-CO-16: the amount due is the total less what was paid in advance, plus the rounding.
  const minor = (v: string | undefined) => (v === undefined || !Number.isFinite(Number(v)) ? 0n : BigInt(Math.round(Number(v) * 10 ** exp)))
  const prepaid = minor(s.BT113)
  compare('BR-CO-16', 'BT-115 (amount due)', s.BT115, vat.total - prepaid + minor(s.BT114))
  if (prepaid !== 0n) {
    findings.push({
      rule: 'BT-113',
      severity: 'warning',
      message: `The document states a paid amount (BT-113) of ${s.BT113}: the request has no field for it, so a PDF of this request (output=pdf, or posted to /invoice) shows the total ${decimalString(vat.total, exp)} as due`,
    })
  }
  for (const g of vat.groups) {
    const key = `${g.category}|${g.rate}`
    const stated = s.groups.get(key)
    if (!stated) {
      findings.push({ rule: 'BR-CO-18', severity: 'error', message: `No VAT breakdown for category ${g.category} at ${g.rate} %, which the lines use` })
      continue
    }
    compare('BR-CO-17', `BT-117 of category ${g.category} at ${g.rate} %`, stated.tax, g.tax)
  }
  for (const key of s.groups.keys()) {
    if (!vat.groups.some((g) => `${g.category}|${g.rate}` === key)) findings.push({ rule: 'BR-CO-18', severity: 'error', message: `VAT breakdown ${key.replace('|', ' at ')} % has no line, allowance or charge in it` })
  }
  return findings
}
