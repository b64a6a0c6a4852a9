// The render pool's autoscaler simulation (scripts/capacity/simulate.ts) reads its settings from
// deploy/kubernetes/base/worker-render.yaml, so the chart in docs/capacity/ must be what it draws
// from the manifests and the measured demands as they are now; and the finding docs/capacity.md
// reports (a queue-length trigger alone gives the pool back mid-burst) must hold.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ASSUMPTIONS, CHART, readScaler, run, simulate, variants } from '../scripts/capacity/simulate.ts'
import { plan } from '../scripts/capacity/plan.ts'

describe('capacity: the autoscaler simulation of the render pool', () => {
  it('the chart in docs/capacity/ is what the simulation draws from the manifests now', () => {
    assert.equal(readFileSync(CHART, 'utf8'), run().svg, `re-run: npx tsx scripts/capacity/simulate.ts`)
  })

  it('replays the ScaledObject of the manifest: its replica bounds, triggers and HPA behaviour', () => {
    const manifest = readFileSync('deploy/kubernetes/base/worker-render.yaml', 'utf8')
    const scaler = readScaler(manifest)
    assert.equal(scaler.min, 1)
    assert.equal(scaler.max, 20)
    assert.equal(scaler.triggers.length, 3)
    assert.equal(scaler.down.window, 300)
    assert.equal(scaler.scrapeS, 15)
    // Another bound in the manifest is another outcome.
    const capped = readScaler(manifest.replace('maxReplicaCount: 20', 'maxReplicaCount: 3'))
    assert.equal(simulate(capped, 260).peakReplicas, 3)
    assert.ok(simulate(capped, 260).refused > simulate(scaler, 260).refused)
  })

  it("docs/capacity.md's table of bursts is what the simulation gives", () => {
    const doc = readFileSync('docs/capacity.md', 'utf8')
    const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d })
    for (const v of variants()) {
      const row = `| ${v.burstMin} min | ${v.triggers} | ${fmt(v.o.refused, 0)} | ${fmt(v.o.lateShare * 100)} % | ${fmt(v.o.p99WaitS)} s | ${fmt(v.o.maxWaitS)} s | ${v.o.peakReplicas} | ${v.lowestInBurst} |`
      assert.ok(doc.includes(row), `docs/capacity.md lacks the row ${row}`)
    }
  })

  it('is deterministic', () => {
    assert.deepEqual(simulate(readScaler(), 260), simulate(readScaler(), 260))
  })

  it('with the throughput trigger the pool holds through a 15-minute burst; with queue length and age alone it falls back to its minimum', () => {
    const long = variants().filter((v) => v.burstMin === 15)
    const withRate = long.find((v) => v.triggers.startsWith('the manifest'))!
    const without = long.find((v) => v.triggers.startsWith('without'))!
    const needed = Math.ceil((ASSUMPTIONS.baseline * ASSUMPTIONS.factor) / run().podRate)
    assert.ok(withRate.lowestInBurst >= needed, `lowest ${withRate.lowestInBurst}, needed ${needed}`)
    assert.equal(without.lowestInBurst, 1)
    assert.ok(without.o.refused > withRate.o.refused)
  })

  it("docs/capacity.md's plan for the target load is what plan.ts gives", () => {
    const doc = readFileSync('docs/capacity.md', 'utf8')
    const p = plan({ invoices: 1000, lines: 20, evaluateRequests: 1_000_000, providerEvaluations: 100_000_000, captures: 10_000, receiverMs: 200 })
    for (const r of p.rows) assert.ok(doc.includes(`| ${r.role} | ${r.pods || '–'} | ${r.cores} |`), `docs/capacity.md: the plan row of ${r.role} is not ${r.pods} pods, ${r.cores} cores`)
    assert.ok(doc.includes(`≥ ${p.mongoWritesPerS.toLocaleString('en-US')} writes/s`))
  })
})
