// Replays a burst of invoices through the render pool's autoscaler, deterministically: the
// ScaledObject of deploy/kubernetes/base/worker-render.yaml (its triggers, thresholds, min/max
// replicas and the HPA behaviour it hands KEDA), the scrape interval of the ServiceMonitor, and a
// pod's render rate from the capacity model. Prints what happens to the queue and the wait, and
// writes the chart docs/capacity.md shows (docs/capacity/render-burst.svg).
//   npx tsx scripts/capacity/simulate.ts [--check]     (--check: fail if the chart in docs/ differs)
import { readFileSync, writeFileSync } from 'node:fs'
import { parseAllDocuments } from 'yaml'
import { renderPodRate } from './pod-rates.ts'

const MANIFEST = 'deploy/kubernetes/base/worker-render.yaml'
const MONITORING = 'deploy/kubernetes/base/monitoring.yaml'
export const CHART = 'docs/capacity/render-burst.svg'

/** What the simulation assumes beyond the manifests (docs/capacity.md, "The autoscaler on a burst"). */
export const ASSUMPTIONS = {
  /** Invoices/s before and after the burst, and the burst's factor and length. */
  baseline: 100,
  factor: 10,
  burstStartS: 120,
  burstS: 300,
  totalS: 1200,
  /** From the HPA's decision to a new pod consuming jobs: scheduling on a node with room, the image already there, module load and one render thread warmed (~5 s of CPU). */
  podStartS: 20,
  /** The HPA controller's sync period (kube-controller-manager default) and its tolerance. */
  hpaSyncS: 15,
  tolerance: 0.1,
  /** The API's admission bound: RENDER_ADMIT_WAIT_MS, half of RENDER_TIMEOUT_MS by default. */
  admitWaitS: 15,
  /** The latency target: a single invoice waits at most this long for a render thread (the ScaledObject's age trigger). */
  targetWaitS: 2,
}

interface Trigger {
  query: string
  threshold: number
  value: boolean
}
interface Policy {
  type: 'Pods' | 'Percent'
  value: number
  periodSeconds: number
}
export interface Scaler {
  min: number
  max: number
  triggers: Trigger[]
  up: { window: number; policies: Policy[]; select: string }
  down: { window: number; policies: Policy[]; select: string }
  scrapeS: number
}

/** The ScaledObject's settings as KEDA hands them to the HPA. */
export function readScaler(manifest = readFileSync(MANIFEST, 'utf8'), monitoring = readFileSync(MONITORING, 'utf8')): Scaler {
  const so = parseAllDocuments(manifest).map((d) => d.toJS()).find((o) => o?.kind === 'ScaledObject')
  const behavior = so.spec.advanced?.horizontalPodAutoscalerConfig?.behavior ?? {}
  const rules = (r: any, dflt: { window: number; policies: Policy[] }) => ({
    window: r?.stabilizationWindowSeconds ?? dflt.window,
    policies: r?.policies ?? dflt.policies,
    select: r?.selectPolicy ?? 'Max',
  })
  const sm = parseAllDocuments(monitoring).map((d) => d.toJS()).find((o) => o?.kind === 'ServiceMonitor')
  return {
    min: so.spec.minReplicaCount ?? 0,
    max: so.spec.maxReplicaCount ?? 100,
    triggers: so.spec.triggers.map((t: any) => ({ query: t.metadata.query, threshold: Number(t.metadata.threshold), value: t.metricType === 'Value' })),
    // The HPA's defaults where the manifest says nothing.
    up: rules(behavior.scaleUp, { window: 0, policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] }),
    down: rules(behavior.scaleDown, { window: 300, policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] }),
    scrapeS: Number(String(sm?.spec.endpoints?.[0]?.interval ?? '30s').replace(/s$/, '')),
  }
}

export interface Sample {
  t: number
  load: number
  capacity: number
  waiting: number
  oldestAgeS: number
  desired: number
  ready: number
}

export interface Outcome {
  samples: Sample[]
  served: number
  refused: number
  /** Share of the invoices served that waited longer than the target, and the longest wait. */
  lateShare: number
  p99WaitS: number
  maxWaitS: number
  peakReplicas: number
  /** Seconds from the burst's start until the oldest waiting invoice is within the target again. */
  recoveredAfterS: number
}

/** A fluid FIFO queue in 1 s steps; the HPA acts every hpaSyncS on the last scraped readings. */
export function simulate(scaler: Scaler, podRate: number, a = ASSUMPTIONS): Outcome {
  const queue: { at: number; n: number }[] = []
  const waits: { s: number; n: number }[] = []
  const samples: Sample[] = []
  let replicas = scaler.min
  const starting: { readyAt: number }[] = []
  let ready = scaler.min
  let scraped = { waiting: 0, age: 0, rate: 0 }
  const done: number[] = []
  const history: { t: number; desired: number }[] = []
  const changes: { t: number; delta: number }[] = []
  let served = 0
  let refused = 0
  let recoveredAfterS = NaN
  for (let t = 0; t < a.totalS; t++) {
    const load = t >= a.burstStartS && t < a.burstStartS + a.burstS ? a.baseline * a.factor : a.baseline
    // Pods whose start is over begin consuming; scale-downs remove ready pods at once (they drain their current jobs).
    for (let i = starting.length - 1; i >= 0; i--) if (starting[i]!.readyAt <= t) (starting.splice(i, 1), ready++)
    const capacity = ready * podRate
    const waiting = queue.reduce((s, b) => s + b.n, 0)
    // Admission: the API refuses a new invoice when what waits would take longer than its bound to start.
    const admitted = capacity > 0 && waiting / capacity > a.admitWaitS ? 0 : load
    refused += load - admitted
    if (admitted > 0) queue.push({ at: t, n: admitted })
    let budget = capacity
    while (budget > 0 && queue.length) {
      const head = queue[0]!
      const take = Math.min(head.n, budget)
      waits.push({ s: t + 1 - head.at - 0.5, n: take })
      head.n -= take
      budget -= take
      served += take
      if (head.n <= 1e-9) queue.shift()
    }
    const after = queue.reduce((s, b) => s + b.n, 0)
    const oldestAgeS = queue.length ? t + 1 - queue[0]!.at : 0
    done.push(capacity - budget)
    // rate(…[1m]) of the jobs finished, as Prometheus reads it at the scrape.
    if (t % scaler.scrapeS === 0) scraped = { waiting: after, age: oldestAgeS, rate: done.slice(-60).reduce((x, y) => x + y, 0) / Math.min(60, done.length) }
    if (t >= a.burstStartS && Number.isNaN(recoveredAfterS) && t > a.burstStartS + 5 && oldestAgeS <= a.targetWaitS && load === a.baseline * a.factor) recoveredAfterS = t - a.burstStartS

    if (t % a.hpaSyncS === 0) {
      // Each trigger's recommendation (KEDA: AverageValue = the metric over the threshold per replica; Value = the ratio times the replicas).
      const proposals = scaler.triggers.map((tr) => {
        const metric = /oldest_waiting_age/.test(tr.query) ? scraped.age : /_count/.test(tr.query) ? scraped.rate : scraped.waiting
        const ratio = tr.value ? metric / tr.threshold : metric / (tr.threshold * replicas)
        return Math.abs(ratio - 1) <= a.tolerance ? replicas : Math.ceil(replicas * ratio)
      })
      let desired = Math.min(scaler.max, Math.max(scaler.min, ...proposals))
      history.push({ t, desired })
      // Stabilisation: up to the lowest, down to the highest recommendation within the window.
      const within = (w: number) => history.filter((h) => h.t > t - w || h.t === t).map((h) => h.desired)
      if (desired > replicas) desired = Math.max(replicas, Math.min(...within(scaler.up.window)))
      else if (desired < replicas) desired = Math.min(replicas, Math.max(...within(scaler.down.window)))
      // Rate policies: how far one period may move the count (selectPolicy Max: the most permissive).
      const limit = (rules: Scaler['up'], sign: 1 | -1) => {
        const allowed = rules.policies.map((p) => {
          const moved = changes.filter((c) => c.t > t - p.periodSeconds && Math.sign(c.delta) === sign).reduce((s, c) => s + Math.abs(c.delta), 0)
          const base = replicas - sign * moved
          return Math.max(0, (p.type === 'Pods' ? p.value : Math.ceil((base * p.value) / 100)) - moved)
        })
        return rules.select === 'Min' ? Math.min(...allowed) : Math.max(...allowed)
      }
      if (desired > replicas) desired = Math.min(desired, replicas + limit(scaler.up, 1))
      if (desired < replicas) desired = Math.max(desired, replicas - limit(scaler.down, -1))
      if (desired !== replicas) {
        changes.push({ t, delta: desired - replicas })
        if (desired > replicas) for (let i = replicas; i < desired; i++) starting.push({ readyAt: t + a.podStartS })
        else {
          let drop = replicas - desired
          while (drop > 0 && starting.length) (starting.pop(), drop--)
          ready -= drop
        }
        replicas = desired
      }
    }
    samples.push({ t, load, capacity, waiting: after, oldestAgeS, desired: replicas, ready })
  }
  const total = waits.reduce((s, w) => s + w.n, 0)
  const sorted = [...waits].sort((x, y) => x.s - y.s)
  let acc = 0
  let p99WaitS = 0
  for (const w of sorted) {
    acc += w.n
    if (acc >= 0.99 * total) {
      p99WaitS = w.s
      break
    }
  }
  const late = waits.filter((w) => w.s > a.targetWaitS).reduce((s, w) => s + w.n, 0)
  return {
    samples,
    served,
    refused,
    lateShare: late / total,
    p99WaitS,
    maxWaitS: Math.max(...waits.map((w) => w.s)),
    peakReplicas: Math.max(...samples.map((s) => s.desired)),
    recoveredAfterS,
  }
}

// ---------------------------------------------------------------- the chart

const r1 = (n: number) => Math.round(n * 10) / 10

/** Three panels over time: load and capacity, waiting jobs and the oldest one's age, replicas. */
export function chart(o: Outcome, title: string): string {
  const W = 760
  const left = 64
  const right = 20
  const panelH = 150
  const gap = 46
  const top = 40
  const tMax = o.samples.length
  const x = (t: number) => r1(left + ((W - left - right) * t) / tMax)
  const parts: string[] = []
  const panel = (i: number, label: string, series: { key: (s: Sample) => number; color: string; name: string; dash?: string }[], yMax: number, unit: string, line?: { v: number; name: string }) => {
    const y0 = top + i * (panelH + gap)
    const y = (v: number) => r1(y0 + panelH - (panelH * Math.min(v, yMax)) / yMax)
    parts.push(`<text x="${left}" y="${y0 - 8}" font-weight="bold">${label}</text>`)
    parts.push(`<rect x="${left}" y="${y0}" width="${W - left - right}" height="${panelH}" fill="none" stroke="#999"/>`)
    for (const f of [0, 0.5, 1]) parts.push(`<text x="${left - 6}" y="${y(yMax * f) + 4}" text-anchor="end">${Math.round(yMax * f).toLocaleString('en-US')}${unit}</text>`)
    for (let t = 0; t <= tMax; t += 120) parts.push(`<text x="${x(t)}" y="${y0 + panelH + 14}" text-anchor="middle">${t / 60} min</text>`)
    if (line) parts.push(`<line x1="${left}" x2="${W - right}" y1="${y(line.v)}" y2="${y(line.v)}" stroke="#c00" stroke-dasharray="4 3"/><text x="${W - right - 4}" y="${y(line.v) - 4}" text-anchor="end" fill="#c00">${line.name}</text>`)
    series.forEach((s, k) => {
      const pts = o.samples.filter((_, j) => j % 2 === 0 || j === o.samples.length - 1).map((p) => `${x(p.t)},${y(s.key(p))}`).join(' ')
      parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.6"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''} points="${pts}"/>`)
      parts.push(`<text x="${left + 8 + k * 190}" y="${y0 + 14}" fill="${s.color}">${s.name}</text>`)
    })
  }
  const maxOf = (f: (s: Sample) => number) => Math.max(1, ...o.samples.map(f))
  const nice = (v: number) => {
    const p = 10 ** Math.floor(Math.log10(v))
    return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= v)!
  }
  panel(0, 'Invoices per second', [{ key: (s) => s.load, color: '#1f5fbf', name: 'offered load' }, { key: (s) => s.capacity, color: '#2a9d3a', name: 'render capacity (ready pods)' }], nice(maxOf((s) => Math.max(s.load, s.capacity))), '/s')
  panel(1, 'Waiting render jobs and the oldest one’s age', [{ key: (s) => s.waiting, color: '#1f5fbf', name: 'waiting jobs (left scale)' }, { key: (s) => (s.oldestAgeS * nice(maxOf((q) => q.waiting))) / nice(maxOf((q) => q.oldestAgeS)), color: '#d07a00', name: `oldest age (0–${nice(maxOf((q) => q.oldestAgeS))} s)`, dash: '5 3' }], nice(maxOf((s) => s.waiting)), '')
  panel(2, 'Render replicas', [{ key: (s) => s.desired, color: '#7b3fb5', name: 'desired (HPA)' }, { key: (s) => s.ready, color: '#2a9d3a', name: 'ready', dash: '5 3' }], nice(maxOf((s) => s.desired)), '')
  const H = top + 3 * (panelH + gap)
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${left}" y="18" font-size="13" font-weight="bold">${title}</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}

export function run(): { outcome: Outcome; svg: string; podRate: number } {
  const podRate = renderPodRate()
  const scaler = readScaler()
  const a = ASSUMPTIONS
  const outcome = simulate(scaler, podRate)
  const title = `Render pool on a ${a.factor}× burst (${a.baseline} → ${a.baseline * a.factor} invoices/s for ${a.burstS / 60} min), ${Math.round(podRate)} invoices/s per pod`
  return { outcome, svg: chart(outcome, title), podRate }
}

/** The burst of 5 and of 15 minutes, with the manifest's triggers and without the throughput one. */
export function variants(podRate = renderPodRate()): { burstMin: number; triggers: string; o: Outcome; lowestInBurst: number }[] {
  const scaler = readScaler()
  const out = []
  for (const burstS of [300, 900]) {
    for (const [name, sc] of [
      ['the manifest (3 triggers)', scaler],
      ['without the throughput trigger', { ...scaler, triggers: scaler.triggers.filter((t) => !/_count/.test(t.query)) }],
    ] as const) {
      const a = { ...ASSUMPTIONS, burstS, totalS: Math.max(ASSUMPTIONS.totalS, ASSUMPTIONS.burstStartS + burstS + 600) }
      const o = simulate(sc, podRate, a)
      const inBurst = o.samples.filter((x) => x.t >= a.burstStartS + 60 && x.t < a.burstStartS + burstS)
      out.push({ burstMin: burstS / 60, triggers: name, o, lowestInBurst: Math.min(...inBurst.map((x) => x.ready)) })
    }
  }
  return out
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { outcome: o, svg, podRate } = run()
  const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d })
  console.log('| burst | triggers | refused (503) | served later than 2 s | p99 wait | max wait | peak replicas | fewest ready after the first minute |\n|---|---|---|---|---|---|---|---|')
  for (const v of variants(podRate)) {
    console.log(`| ${v.burstMin} min | ${v.triggers} | ${fmt(v.o.refused, 0)} | ${fmt(v.o.lateShare * 100)} % | ${fmt(v.o.p99WaitS)} s | ${fmt(v.o.maxWaitS)} s | ${v.o.peakReplicas} | ${v.lowestInBurst} |`)
  }
  console.log(`pod rate ${fmt(podRate)} invoices/s; peak replicas ${o.peakReplicas}; served ${fmt(o.served, 0)}, refused (503) ${fmt(o.refused, 0)}`)
  console.log(`waits: p99 ${fmt(o.p99WaitS)} s, max ${fmt(o.maxWaitS)} s; served later than ${ASSUMPTIONS.targetWaitS} s: ${fmt(o.lateShare * 100)} %; oldest age back within ${ASSUMPTIONS.targetWaitS} s after ${fmt(o.recoveredAfterS)} s of the burst`)
  if (process.argv.includes('--check')) {
    if (readFileSync(CHART, 'utf8') !== svg) throw new Error(`${CHART} is not what the simulation draws now: run npx tsx scripts/capacity/simulate.ts`)
  } else writeFileSync(CHART, svg)
}
