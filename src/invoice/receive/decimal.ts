// Exact decimal arithmetic on the amounts a received e-invoice states, as the EN 16931 schematron
// does it (xs:decimal, XPath round = half towards +∞): fixed point with 12 decimals in a bigint,
// so a stated "-109.98" or "0.005" is summed and compared without a float in between.
const SCALE = 12
const ONE = 10n ** BigInt(SCALE)

export type Dec = bigint

/** "−12.345" → Dec; undefined for anything that is no decimal (it is then not compared). */
export function dec(s: string | undefined): Dec | undefined {
  if (s === undefined) return undefined
  const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?\s*$/.exec(s)
  if (!m || (m[2] === '' && !m[3])) return undefined
  const frac = (m[3] ?? '').slice(0, SCALE).padEnd(SCALE, '0')
  const v = BigInt(m[2] || '0') * ONE + BigInt(frac || '0')
  return m[1] === '-' ? -v : v
}

export const decimals = (s: string): number => (/\.(\d*)/.exec(s.trim())?.[1]?.replace(/0+$/, '').length ?? 0)

/** XPath round(x × 100) div 100: half towards +∞. */
export function round2(v: Dec): Dec {
  const unit = ONE / 100n
  const a = v + unit / 2n
  const q = a >= 0n ? a / unit : -((-a + unit - 1n) / unit) // floor division
  return q * unit
}

export const sum = (xs: (Dec | undefined)[]): Dec => xs.reduce<Dec>((a, x) => a + (x ?? 0n), 0n)

/** taxable × rate / 100 */
export const percentOf = (taxable: Dec, rate: Dec): Dec => (taxable * rate) / (100n * ONE)

export const abs = (v: Dec): Dec => (v < 0n ? -v : v)

export const ONE_UNIT = ONE

/** Dec → "123.45" (at least 2 decimals, more only when the value has them). */
export function show(v: Dec): string {
  const neg = v < 0n
  const a = (neg ? -v : v).toString().padStart(SCALE + 1, '0')
  let frac = a.slice(-SCALE).replace(/0+$/, '')
  if (frac.length < 2) frac = frac.padEnd(2, '0')
  return `${neg ? '-' : ''}${a.slice(0, -SCALE)}.${frac}`
}
