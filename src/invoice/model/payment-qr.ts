// Payment QR codes on the invoice PDF (`payment_qr`):
//   epc   — the EPC SEPA credit-transfer QR ("GiroCode", EPC069-12 version 002, UTF-8): BIC,
//           payee, IBAN, EUR amount, and the remittance: an RF creditor reference (ISO 11649) in
//           the structured field, which banks match automatically, any other text in the
//           unstructured one; printed beside the payment details.
//   swiss — the Swiss QR-bill payment part (receipt + payment part, 210 × 105 mm) drawn by the
//           swissqrbill package as SVG, on its own last page as the QR-bill standard places it.
// einvoice-requirements.ts checks beforehand that the request has what each needs.
import type { Content } from 'pdfmake/interfaces.js'
import type { Data } from 'swissqrbill/types'
import { isSCORReferenceValid } from 'swissqrbill/utils'
import { decimalString } from './money.ts'
import { SwissQRBill } from './swiss-qr-version.ts'
import type { InvoiceRequest } from './invoice-request.ts'

/** What an RF creditor reference looks like (ISO 11649: "RF", 2 check digits, up to 21 letters and digits), spaces removed. */
const RF_SHAPE = /^RF\d{2}[A-Z0-9]{1,21}$/

/**
 * A reference written as an RF creditor reference, normalised (no spaces, upper case), with
 * whether its check digits hold (mod 97, checked by swissqrbill's ISO 11649 function); null for
 * any other reference.
 */
export function rfReference(reference: string | undefined): { rf: string; valid: boolean } | null {
  const rf = reference?.replace(/\s+/g, '').toUpperCase()
  if (!rf || !RF_SHAPE.test(rf)) return null
  return { rf, valid: isSCORReferenceValid(rf) }
}

/** The EPC069-12 payload: one field per line, in this order. */
export function epcPayload(req: InvoiceRequest, totalMinor: bigint, exp: number): string {
  const p = req.payment!
  const name = (p.account_name ?? req.from!.name!).slice(0, 70)
  // Field 10 (structured, a creditor reference) or field 11 (unstructured text): never both.
  const rf = rfReference(p.reference)
  const structured = rf?.valid ? rf.rf : ''
  const remittance = structured ? '' : (p.reference ?? req.invoice_number ?? '').slice(0, 140)
  return ['BCD', '002', '1', 'SCT', p.bic ?? '', name, p.iban!, `EUR${decimalString(totalMinor, exp)}`, '', structured, remittance].join('\n')
}

/** The swissqrbill data of the request: creditor from the seller, debtor from a complete buyer address. */
export function swissData(req: InvoiceRequest, totalMinor: bigint | undefined, exp: number): Data {
  const from = req.from!
  const data: Data = {
    currency: req.currency as 'CHF' | 'EUR',
    creditor: { name: (req.payment?.account_name ?? from.name!).slice(0, 70), address: from.street ?? '', zip: from.postal_code!, city: from.city!, country: from.country!, account: req.payment!.iban! },
  }
  if (totalMinor !== undefined && totalMinor > 0n) data.amount = Number(decimalString(totalMinor, exp))
  const to = req.to
  if (to?.name && to.street && to.postal_code && to.city && to.country) {
    data.debtor = { name: to.name.slice(0, 70), address: to.street, zip: to.postal_code, city: to.city, country: to.country }
  }
  const ref = req.payment?.reference?.replace(/\s+/g, '')
  // A QR or creditor (RF) reference is structured; any other reference goes in the message.
  if (ref && (/^\d{27}$/.test(ref) || /^RF\d{2}[A-Z0-9]{1,21}$/i.test(ref))) data.reference = ref
  else if (req.payment?.reference) data.message = req.payment.reference.slice(0, 140)
  return data
}

/** Why swissqrbill refuses the request's data (a QR-IBAN without a QR reference, a bad country …), if it does. */
export function swissProblem(req: InvoiceRequest): string | null {
  try {
    new SwissQRBill(swissData(req, undefined, 2))
    return null
  } catch (err) {
    return (err as Error).message
  }
}

/** CSS px per mm: the unit the SVG renderer converts the bill's mm into. */
const MM_PX = 96 / 25.4

const SWISS_LANGUAGE: Record<string, 'DE' | 'FR' | 'IT' | 'EN'> = { de: 'DE', fr: 'FR', it: 'IT' }

/**
 * `svgFont` is the pdfmake family the payment part's text is set in (its SVG asks for Arial):
 * the standard Helvetica, or Noto Sans when the PDF embeds its fonts.
 */
export function paymentQr(req: InvoiceRequest, totalMinor: bigint, exp: number, svgFont = 'Helvetica'): { content: Content; page?: Content[] } | null {
  if (req.payment_qr === 'epc') {
    const payload = epcPayload(req, totalMinor, exp)
    return { content: { qr: payload, fit: 120, eccLevel: 'M', margin: [0, 0, 0, 0] } as Content }
  }
  if (req.payment_qr === 'swiss') {
    const svg = new SwissQRBill(swissData(req, totalMinor, exp), { language: SWISS_LANGUAGE[req.locale ?? 'en'] ?? 'EN' })
      .toString()
      // Sized in points for pdfmake (it reads "210mm" as 210 points). The drawing inside is in
      // mm, which the SVG renderer turns into CSS px (96 per inch): the viewBox is the bill in px,
      // so it is scaled to exactly 210 × 105 mm. Without it the part was drawn 4/3 too large
      // and clipped at the page edge, cutting off the bottom of the QR code.
      .replace('width="210mm" height="105mm"', `width="595.28" height="297.64" viewBox="0 0 ${MM_PX * 210} ${MM_PX * 105}"`)
      .replace(/font-family="[^"]*"/g, `font-family="${svgFont}"`)
    // A4 is 595.28 × 841.89 pt; the payment part is the bottom 105 mm (297.64 pt) of its page.
    return {
      content: { text: '' },
      page: [{ text: '', pageBreak: 'before' }, { svg, font: svgFont, width: 595.28, absolutePosition: { x: 0, y: 841.89 - 297.64 } } as Content],
    }
  }
  return null
}
