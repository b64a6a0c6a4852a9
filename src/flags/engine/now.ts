// The time the engine's `now` conditions (`before`/`after` with the attribute `now`) compare with.
// The engine stands alone — it is bundled into the in-process provider, which has no platform —
// so it reads no platform module: by default the system time; the flags service hands it the
// platform's clock (src/flags/service.ts), so tests that move that clock move the engine's too.
let source: () => number = Date.now

export const engineNowMs = (): number => source()

export function setEngineClock(nowMs: () => number): void {
  source = nowMs
}
