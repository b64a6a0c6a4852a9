// The one clock. Tests move time with setNow(); production code never calls Date.now() directly.
let offsetMs = 0
let frozen: number | null = null

export const clock = {
  now(): Date {
    return new Date(frozen ?? Date.now() + offsetMs)
  },
  nowMs(): number {
    return frozen ?? Date.now() + offsetMs
  },
  /** Freeze at a fixed instant (tests). */
  setNow(d: Date | null): void {
    frozen = d ? d.getTime() : null
  },
  /** Shift real time by an offset (tests of long schedules). */
  advance(ms: number): void {
    if (frozen !== null) frozen += ms
    else offsetMs += ms
  },
  reset(): void {
    frozen = null
    offsetMs = 0
  },
}

/** UTC calendar month key, e.g. "2026-11". */
export function monthKey(d: Date): string {
  return d.toISOString().slice(0, 7)
}

/** UTC calendar day key, e.g. "2026-11-21". */
export function dayKey(d: Date): string {
  return d.toISOString().slice(0, 10)
}
