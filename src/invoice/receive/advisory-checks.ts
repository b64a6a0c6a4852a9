// Checks a receiver may find useful that EN 16931 does not make (docs/einvoice-receiving.md): IBAN and BIC check digits and forms, a SIREN's check digit. Never more than
// warnings: the document is valid without them.
import { luhn } from '../model/einvoice-schema.ts'
import type { Finding, Stated } from './read-result.ts'
import type { Facts } from './received.ts'

function ibanValid(iban: string): boolean {
  const s = iban.replace(/\s/g, '').toUpperCase()
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(s)) return false
  const digits = (s.slice(4) + s.slice(0, 4)).replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55))
  let r = 0
  for (const ch of digits) r = (r * 10 + Number(ch)) % 97
  return r === 1
}

export function advisoryFindings(stated: Stated, facts: Facts, sellerScheme?: string): Finding[] {
  const out: Finding[] = []
  stated.payment_means.forEach((m, i) => {
    const path = `payment means ${i + 1}`
    for (const [bt, v] of [['BT-84', m.account], ['BT-91', m.debited_account]] as const) {
      // Only what looks like an IBAN is checked: BT-84 may be any account identifier.
      if (v && /^[A-Z]{2}\d{2}/.test(v.replace(/\s/g, '')) && !ibanValid(v)) {
        out.push({ rule: 'IBAN', severity: 'warning', bt, stated: v, path, message: `${path}: the account identifier (${bt}) ${v} looks like an IBAN but its check digits do not match (not an EN 16931 rule: check it before paying)` })
      }
    }
    if (m.bic && !/^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$/.test(m.bic)) {
      out.push({ rule: 'BIC', severity: 'warning', bt: 'BT-86', stated: m.bic, path, message: `${path}: the payment service provider identifier (BT-86) ${m.bic} is not a BIC of 8 or 11 characters (not an EN 16931 rule)` })
    }
  })
  const legal = facts.sellerLegalId
  if (legal && sellerScheme === '0002' && !(/^\d{9}$/.test(legal) && luhn(legal))) {
    out.push({ rule: 'SIREN', severity: 'warning', bt: 'BT-30', stated: legal, message: `The seller legal registration identifier (BT-30) ${legal} has scheme 0002 (SIREN) but is not 9 digits with a valid check digit (not an EN 16931 rule)` })
  }
  return out
}
