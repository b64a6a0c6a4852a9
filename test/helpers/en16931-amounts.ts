// Decimal amounts as EN 16931 documents write them ("1436.5", "-109.98", "0") compared and
// computed exactly, in hundredths as bigint: a test states what a total must be without binary
// floating point deciding it.

/** The amount in 1/10^scale units; throws on text that is no decimal. */
export function units(amount: string, scale = 2): bigint {
  const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?\s*$/.exec(amount)
  if (!m || (m[2] === '' && !m[3])) throw new Error(`not a decimal amount: ${JSON.stringify(amount)}`)
  const frac = (m[3] ?? '').padEnd(scale, '0')
  if (/[1-9]/.test(frac.slice(scale))) throw new Error(`${amount} has more than ${scale} decimals`)
  const v = BigInt((m[2] || '0') + frac.slice(0, scale))
  return m[1] === '-' ? -v : v
}

/** Canonical text of a decimal: no plus sign, no leading or trailing zeros ("1436.50" → "1436.5"). */
export function canonical(amount: string): string {
  if (amount.trim() === '') return ''
  const m = /^\s*([+-]?)0*(\d*?)(?:\.(\d*?)0*)?\s*$/.exec(amount)
  if (!m) throw new Error(`not a decimal amount: ${JSON.stringify(amount)}`)
  const int = m[2] || '0'
  const frac = m[3] ?? ''
  const zero = /^0*$/.test(int + frac)
  return `${m[1] === '-' && !zero ? '-' : ''}${int}${frac ? `.${frac}` : ''}`
}

/** Hundredths as decimal text with two places: 123456n → "1234.56". */
export function text(cents: bigint): string {
  const neg = cents < 0n
  const a = (neg ? -cents : cents).toString().padStart(3, '0')
  return `${neg ? '-' : ''}${a.slice(0, -2)}.${a.slice(-2)}`
}

/** amount + delta, written with the amount's own number of decimals (at least two). */
export function plus(amount: string, delta: string): string {
  const places = Math.max(2, (amount.split('.')[1] ?? '').trim().length)
  const v = units(amount, places) + units(delta, places)
  const neg = v < 0n
  const a = (neg ? -v : v).toString().padStart(places + 1, '0')
  return `${neg ? '-' : ''}${a.slice(0, -places)}.${a.slice(-places)}`
}

/** x × rate / 100 rounded half away from zero to hundredths (x in hundredths, rate as text). */
export function percentOf(cents: bigint, rate: string): bigint {
  const r = units(rate, 4) // rate in 1/10^4 percent
  const num = cents * r // hundredths × 10^-4 percent → divide by 10^6
  const den = 1_000_000n
  const q = num / den
  const rem = num % den
  const twice = (rem < 0n ? -rem : rem) * 2n
  return twice >= den ? q + (num < 0n ? -1n : 1n) : q
}
