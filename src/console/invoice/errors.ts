// The service's 400 messages put at the fields they name. An invoice message starts with the
// field's path, often followed by its EN 16931 business term and the rule (`to.vat_id (BT-48) is
// required for tax category K (BR-IC-02)`); the e-invoice requirements come as one message of
// several such parts joined by "; ". Each part goes to its field; a part that names no field of
// the form stays in the summary above it.
import { signal } from '@preact/signals'

export interface Problem {
  /** The API path (`items[0].quantity`), or null when the message names none. */
  path: string | null
  message: string
}

export const problems = signal<Problem[]>([])

const PATH = /^([a-z_][a-z0-9_]*(?:\[\d+\]|\.[a-z_][a-z0-9_]*)*)(?=\s)/

export function parseProblems(message: string): Problem[] {
  return message
    .split(/;\s+(?=[a-z_][a-z0-9_]*(?:\[\d+\]|\.[a-z_][a-z0-9_]*)*\s)/)
    .map((part) => {
      const m = PATH.exec(part)
      // "items is required …" names the list; a message starting with an English word names nothing.
      const path = m && (m[1]!.includes('.') || m[1]!.includes('[') || m[1]!.includes('_') || KNOWN_TOP.has(m[1]!)) ? m[1]! : null
      return { path, message: part.trim() }
    })
}

const KNOWN_TOP = new Set(['items', 'from', 'to', 'date', 'currency', 'discount', 'notes', 'footer', 'format', 'locale', 'payment', 'allowances', 'charges'])

/** The message for one field (several joined), or null. */
export function problemAt(path: string): string | null {
  const found = problems.value.filter((p) => p.path === path)
  return found.length ? found.map((p) => p.message).join(' · ') : null
}

/** True when a problem is about a field under `prefix` (a closed section opens for it). */
export function problemUnder(prefix: string): boolean {
  return problems.value.some((p) => p.path !== null && (p.path === prefix || p.path.startsWith(`${prefix}.`) || p.path.startsWith(`${prefix}[`)))
}
