// Open-loop requests at a fixed rate for the latency benchmarks (capture → forward, capture →
// stream event): each request carries its own id, so that what arrives elsewhere can be matched
// to when it was sent. A request that fails or is not answered 2xx is counted by status, never
// the end of the run; its id is left out of `answered`.
import { percentile } from './harness.ts'

export interface Paced {
  /** Send time (performance.now()) of every request, by id. */
  sent: Map<string, number>
  /** Answer time of every 2xx request, by id. */
  answered: Map<string, number>
  failures: Record<string, number>
}

/** Sends `rate` requests a second for `seconds` s with `send(id, i)`; resolves when all are answered or failed. */
export async function pacedSend(rate: number, seconds: number, prefix: string, send: (id: string, i: number) => Promise<Response>): Promise<Paced> {
  const out: Paced = { sent: new Map(), answered: new Map(), failures: {} }
  const total = Math.round(rate * seconds)
  const pending: Promise<void>[] = []
  const started = performance.now()
  for (let i = 0; i < total; i++) {
    // Ids travel in headers: ASCII only.
    const id = `${prefix.replace(/[^A-Za-z0-9]+/g, '-')}${i}`
    out.sent.set(id, performance.now())
    pending.push(
      send(id, i).then(
        async (r) => {
          await r.arrayBuffer()
          if (r.ok) out.answered.set(id, performance.now())
          else out.failures[String(r.status)] = (out.failures[String(r.status)] ?? 0) + 1
        },
        (err: Error & { cause?: Error }) => {
          // The first error's reason is printed once: a count alone does not say what broke.
          if (!out.failures.errors) console.error(`${id}: ${err.message}${err.cause ? ` (${err.cause.message})` : ''}`)
          out.failures.errors = (out.failures.errors ?? 0) + 1
        },
      ),
    )
    // Paced against the start, so a late timer does not slow the whole run down.
    const wait = started + ((i + 1) * 1000) / rate - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  }
  await Promise.all(pending)
  return out
}

/** Waits (polling, at most `boundMs`) until every answered id has arrived; "not arrived" joins the failures. */
export async function arrivals(p: Paced, arrived: Map<string, number>, boundMs = 30_000): Promise<{ latencies: number[]; afterAnswer: number[]; answer: number[]; failures: Record<string, number> }> {
  const deadline = Date.now() + boundMs
  while ([...p.answered.keys()].some((id) => !arrived.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  const failures = { ...p.failures }
  const missing = [...p.answered.keys()].filter((id) => !arrived.has(id)).length
  if (missing) failures['not arrived'] = missing
  const got = [...p.answered.keys()].filter((id) => arrived.has(id))
  return {
    latencies: got.map((id) => arrived.get(id)! - p.sent.get(id)!),
    // What the path after the answer adds (the answer itself excluded).
    afterAnswer: got.map((id) => arrived.get(id)! - p.answered.get(id)!),
    answer: [...p.answered].map(([id, t]) => t - p.sent.get(id)!),
    failures,
  }
}

export const p50 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50)
