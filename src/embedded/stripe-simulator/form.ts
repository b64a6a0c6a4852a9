// Decodes Stripe's request encoding: application/x-www-form-urlencoded with bracketed paths
// (`line_items[0][price_data][currency]=usd`, `metadata[plan]=pro`), as the stripe library writes it.
export type FormValue = string | FormValue[] | { [k: string]: FormValue }

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/

export function parseStripeForm(body: string): Record<string, FormValue> {
  const root: Record<string, FormValue> = {}
  for (const [key, value] of new URLSearchParams(body)) {
    const m = KEY.exec(key)
    if (!m) continue
    const path = [m[1]!, ...[...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1]!)]
    let node: any = root
    for (let i = 0; i < path.length; i++) {
      const seg = path[i]!
      const last = i === path.length - 1
      // Refuse prototype keys: this parses what any local process sends.
      if (seg === '__proto__' || seg === 'constructor' || seg === 'prototype') break
      const nextIsIndex = !last && /^\d+$/.test(path[i + 1]!)
      if (last) node[seg === '' && Array.isArray(node) ? node.length : seg] = value
      else {
        node[seg] ??= nextIsIndex ? [] : {}
        node = node[seg]
      }
    }
  }
  return root
}
