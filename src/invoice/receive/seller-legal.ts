// The seller's legal identifiers of a received e-invoice read back into the request's fields: the
// register entry (court and number) from the additional legal information (BT-33) this service
// writes in the invoice's language, the SIREN, and the legal registration id (BT-30) itself.
import { luhn } from '../model/einvoice-schema.ts'
import { registerNote } from '../model/legal-wording.ts'

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** BT-33 as the register note of one of the locales that word it ("Registergericht: …"). */
function registerOf(info: string, bt30: string | undefined): { court: string; number: string; locale: string } | undefined {
  for (const locale of ['de', 'fr', 'en']) {
    // The number is BT-30 when the document says so (it is when no other legal id was sent);
    // else the note is split where its wording separates the two (the last blank in French).
    const exact = bt30 ? registerNote({ court: '\u0001', number: bt30 }, locale)! : undefined
    const loose = registerNote({ court: '\u0001', number: '\u0002' }, locale)!
    for (const [tpl, court, number] of [
      [exact, '(.+)', ''],
      [loose, locale === 'fr' ? '(.+)' : '(.+?)', '(.+)'],
    ] as const) {
      if (!tpl) continue
      const re = new RegExp(`^${escape(tpl).replace('\u0001', court).replace('\u0002', number)}$`)
      const m = re.exec(info)
      if (m) return { court: m[1]!, number: m[2] ?? bt30!, locale }
    }
  }
  return undefined
}

/** legal_id, siren and register of the seller; locale when the note is worded in de or fr. */
export function sellerLegal(bt30: string | undefined, scheme: string | undefined, bt33: string | undefined, country: string | undefined) {
  const register = bt33 ? registerOf(bt33, bt30) : undefined
  // A French seller's 9-digit BT-30 with a valid check digit (or scheme 0002) is its SIREN.
  const siren = bt30 && (scheme === '0002' || (country === 'FR' && /^\d{9}$/.test(bt30) && luhn(bt30))) ? bt30 : undefined
  return {
    legal_id: bt30 !== undefined && bt30 !== siren && bt30 !== register?.number ? bt30 : undefined,
    siren,
    register: register ? { number: register.number, court: register.court } : undefined,
    locale: register && register.locale !== 'en' ? register.locale : undefined,
    /** BT-33 that is no register note this service words: kept for the findings. */
    otherInfo: bt33 && !register ? bt33 : undefined,
  }
}
