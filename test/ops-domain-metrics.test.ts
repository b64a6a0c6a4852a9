// The domain counters on /metrics: flag evaluations by reason, and webhook forward attempts by
// outcome (success, http_error, dead_lettered), counted once per attempt; and the event-loop lag.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { capture, createEndpoint, signup as webhooksSignup, startTarget, waitFor } from './helpers/webhooks.ts'

/** Value of one sample of a counter in Prometheus text, 0 when absent. */
function sample(text: string, name: string, label: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${label}}`))
  return line ? Number(line.split(' ').pop()) : 0
}

describe('ops: domain metrics', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['flags', 'webhooks'], env: { WEBHOOK_FORWARD_SCHEDULE_MS: '0,100' } })
  })
  after(async () => sys?.stop())
  const metricsText = async () => (await get(`${sys.root.flags}/metrics`)).text

  it('counts flag evaluations by reason', async () => {
    const api = `${sys.root.flags}/api/v1`
    const s = await post(`${api}/signup`, { email: 'metrics-flags@example.com' })
    const { api_key: key, sdk_key: sdk } = s.json
    const pid = s.json.project.id
    assert.equal((await post(`${api}/projects/${pid}/flags`, { key: 'on', name: 'On', enabled: true }, { key })).status, 201)
    assert.equal((await post(`${api}/projects/${pid}/flags`, { key: 'off', name: 'Off', enabled: false }, { key })).status, 201)
    const before = await metricsText()
    const r = await post(`${api}/evaluate`, { sdk_key: sdk, flags: ['on', 'off', 'missing'], context: {} })
    assert.equal(r.status, 200, r.text)
    const after = await metricsText()
    for (const reason of ['DEFAULT', 'DISABLED', 'FLAG_NOT_FOUND']) {
      const label = `reason="${reason}"`
      assert.equal(sample(after, 'flag_evaluations_total', label) - sample(before, 'flag_evaluations_total', label), 1, reason)
    }
  })

  it('reports the event-loop lag without its 100 ms sampling interval, and a stall in full, even right after a scrape (docs/operations.md, "Metrics")', async () => {
    const gaugeOf = (text: string, name: string) => Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1])
    await metricsText() // a scrape starts the next window of the lag histogram
    await new Promise((r) => setTimeout(r, 450))
    const idle = gaugeOf(await metricsText(), 'nodejs_eventloop_lag_p50_seconds')
    // Node's histogram holds the time between samples (≥ 100 ms); the interval is taken off.
    assert.ok(idle >= 0 && idle < 0.09, `idle lag p50 ${idle} s`)
    // A stall right after a scrape (Node's own monitor drops the first interval after a reset).
    const end = Date.now() + 300
    while (Date.now() < end); // the service runs in this process: its loop stalls too
    await new Promise((r) => setTimeout(r, 250))
    const max = gaugeOf(await metricsText(), 'nodejs_eventloop_lag_max_seconds')
    assert.ok(max >= 0.2 && max < 5, `lag max ${max} s after a 300 ms stall`)
  })

  it('counts forward attempts by outcome, and the dead letter', async () => {
    const target = await startTarget((_r, _i, res) => {
      res.statusCode = 500
      res.end('no')
    })
    try {
      const key = await webhooksSignup(sys, 'starter')
      const ep = await createEndpoint(sys, key, { forward_url: target.url })
      const before = await metricsText()
      assert.equal((await capture(ep.url, { body: 'x' })).status, 200)
      await waitFor(async () => sample(await metricsText(), 'webhook_forward_attempts_total', 'outcome="dead_lettered"') > sample(before, 'webhook_forward_attempts_total', 'outcome="dead_lettered"'), 20_000, 'dead letter')
      const after = await metricsText()
      const delta = (o: string) => sample(after, 'webhook_forward_attempts_total', `outcome="${o}"`) - sample(before, 'webhook_forward_attempts_total', `outcome="${o}"`)
      assert.equal(delta('http_error'), 2)
      assert.equal(delta('dead_lettered'), 1)
      assert.equal(delta('success'), 0)
      assert.equal(target.received.length, 2)
    } finally {
      await target.close()
    }
  })
})
