// The schema check of a received e-invoice (docs/einvoice-receiving.md): XSD validity
// with xmllint when schemas are configured. The business rules are en16931-rules.ts and
// declared-rules.ts; this service's writing rules are resend.ts.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Finding } from './read-result.ts'

export type { Finding }

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
