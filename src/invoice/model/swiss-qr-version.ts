// The QR version of the Swiss QR-bill's code. swissqrbill encodes the payload with the smallest
// QR version from 10 up (ECC level M, as the Swiss standard requires). Versions 7 to 13 have an
// alignment pattern in the very centre, exactly under the mandatory 7 × 7 mm Swiss cross; with
// it covered, zbar (the standard open-source decoder; its known issues #121, #167, #216) reads
// none of them, while versions 14 to 20 (no centre alignment pattern) decode. So the code is
// encoded with version 14 or above (modules 0.63 mm, still well over the 0.4 mm the standard
// allows at version 25); a payload too long for version 20 keeps the library's choice.
//
// The encoder is swissqrbill's own (Nayuki's qrcodegen), which the package does not export: it is
// loaded by its file path beside the package's CommonJS entry and its encodeSegments() wrapped, so
// payload, ECI, ECC level and mask stay exactly the library's. The SwissQRBill class is taken
// from the same CommonJS build (synchronously, so the render threads' loader needs no top-level
// await), which makes it the one whose encoder is wrapped. A swissqrbill upgrade that moves the
// file fails at load here (and the zbar decode tests in invoice-locale.test.ts).
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

interface QrCodeClass {
  encodeSegments(segs: unknown[], ecl: unknown, minVersion?: number, maxVersion?: number, mask?: number, boostEcl?: boolean): unknown
}

/** The first QR version without an alignment pattern in the centre, and the last one. */
export const SWISS_QR_MIN_VERSION = 14
const LAST_WITHOUT_CENTRE = 20

const require = createRequire(import.meta.url)
const entry = require.resolve('swissqrbill/svg')
const { qrcodegen } = require(join(dirname(entry), '..', 'shared', 'qr-code-generator.cjs')) as { qrcodegen: { QrCode: QrCodeClass } }

const encodeSegments = qrcodegen.QrCode.encodeSegments.bind(qrcodegen.QrCode)
qrcodegen.QrCode.encodeSegments = (segs, ecl, minVersion = 1, maxVersion = 40, mask = -1, boostEcl = true) => {
  if (minVersion < SWISS_QR_MIN_VERSION && maxVersion >= LAST_WITHOUT_CENTRE) {
    try {
      return encodeSegments(segs, ecl, SWISS_QR_MIN_VERSION, LAST_WITHOUT_CENTRE, mask, boostEcl)
    } catch {
      // Longer than version 20 holds: the library's own choice (21–25) below.
    }
  }
  return encodeSegments(segs, ecl, minVersion, maxVersion, mask, boostEcl)
}

/** swissqrbill's SVG QR-bill, drawing its code with the version chosen above. */
export const SwissQRBill = (require('swissqrbill/svg') as typeof import('swissqrbill/svg')).SwissQRBill
