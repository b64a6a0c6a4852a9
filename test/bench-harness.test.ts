// The benchmarks' shared harness (scripts/bench/lib/harness.ts) measures what it claims: rounds
// interleaved per side, the load generator in its own process, failed requests counted (not
// fatal), and a reference server that reads and parses the request body.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  closeLoadGenerator,
  coreSplit,
  httpSide,
  interleave,
  latencyRound,
  loadGeneratorPid,
  machineCpuMs,
  ratio,
  runLoad,
  startReferenceServer,
  type ReferenceServer,
} from '../scripts/bench/lib/harness.ts'
import { schedstat } from '../scripts/bench/lib/loop-probe.mjs'
import { arrivals, pacedSend } from '../scripts/bench/lib/paced-send.ts'
import { openStream } from '../scripts/listen/stream.ts'

function serve(status: number): Promise<{ url: string; hits: () => number; server: http.Server }> {
  let hits = 0
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      hits++
      res.writeHead(status, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits, server })))
}

describe('bench harness', () => {
  let reference: ReferenceServer | undefined
  after(async () => {
    await reference?.close()
    await closeLoadGenerator()
  })

  it('runs interleaved rounds in another process and counts every failed request by status', async function () {
    this.timeout(30_000)
    const good = await serve(200)
    const bad = await serve(500)
    try {
      const order: string[] = []
      const results = await interleave(
        [httpSide('good', { url: good.url }, { connections: 2 }), httpSide('bad', { url: bad.url }, { connections: 2 })],
        { rounds: 3, seconds: 1, warmupSeconds: 0, log: (l) => order.push(l) },
      )
      assert.deepEqual(
        order.map((l) => /^round (\d)\/3 (\w+)/.exec(l)?.slice(1).join(' ')),
        ['1 good', '1 bad', '2 good', '2 bad', '3 good', '3 bad'],
      )
      for (const l of order) assert.match(l, /load \d+\.\d\d/)
      const g = results.good!
      const b = results.bad!
      assert.equal(g.rounds.length, 3)
      assert.equal(g.failed, 0)
      assert.ok(g.median > 0 && g.min <= g.median && g.median <= g.max)
      // The 500s are the bad server's every answer: all counted, none a success.
      assert.equal(b.median, 0)
      assert.ok(b.failed > 0)
      assert.equal(b.failures['500'], b.failed)
      // Answers still in flight when a round's time is up are served but not counted.
      assert.ok(b.failed <= bad.hits())
      assert.equal(ratio(b, g).median, 0)
    } finally {
      good.server.close()
      bad.server.close()
    }
  })

  it('the reference server runs in its own process and parses the body it is sent', async function () {
    this.timeout(20_000)
    reference = await startReferenceServer('{"answer":1}')
    assert.notEqual(reference.child.pid, process.pid)
    const ok = await fetch(reference.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    assert.equal(ok.status, 200)
    assert.deepEqual(await ok.json(), { answer: 1 })
    const broken = await fetch(reference.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' })
    assert.equal(broken.status, 500)
  })

  it('the capture reference keeps a raw body, writes it to the streams of its endpoint and forwards it', async function () {
    this.timeout(20_000)
    const got = new Map<string, number>()
    const bodies: string[] = []
    const target = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        got.set(String(req.headers['x-bench-id']), performance.now())
        bodies.push(Buffer.concat(chunks).toString())
        res.end('ok')
      })
    })
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()))
    const relay = await startReferenceServer('{"ok":true}', { body: 'raw', forwardTo: `http://127.0.0.1:${(target.address() as AddressInfo).port}/in` })
    const ac = new AbortController()
    try {
      const events: string[] = []
      const stream = openStream({ api: relay.url, token: 'tok', key: 'unused', signal: ac.signal, onEvent: (ev) => void (ev.event === 'capture' && events.push(JSON.parse(ev.data).body)) })
      stream.ended.catch(() => undefined)
      await stream.opened
      // Not JSON: a raw reference keeps it as it came (the JSON one would answer 500).
      const sent = await pacedSend(20, 0.5, 'r', (id) => fetch(`${relay.url}/hook/tok`, { method: 'POST', headers: { 'x-bench-id': id }, body: `not json ${id}` }))
      assert.equal(sent.answered.size, 10)
      const a = await arrivals(sent, got, 10_000)
      assert.deepEqual(a.failures, {})
      assert.equal(a.latencies.length, 10)
      assert.deepEqual(bodies.sort(), [...sent.sent.keys()].map((id) => `not json ${id}`).sort())
      for (let i = 0; events.length < 10 && i < 100; i++) await new Promise((r) => setTimeout(r, 50))
      assert.deepEqual(events.sort(), bodies)
      // A capture that never arrives is a failure of the round, not a missing figure.
      const round = latencyRound(a.latencies, { ...a.failures, 'not arrived': 2 })
      assert.equal(round.failed, 2)
      assert.ok(round.rate > 0 && Math.abs(round.rate - round.p50!) < 0.1)
    } finally {
      ac.abort()
      await relay.close()
      target.closeAllConnections()
      target.close()
    }
  })

  it('a pinned side puts the server and the load generator on cores of their own, an unpinned one gives them all back', async function () {
    this.timeout(30_000)
    const cores = coreSplit()
    // The method falls back to unpinned rounds where this cannot be done (docs/benchmarks.md).
    if (!cores.split) return this.skip()
    const { server, generator, all } = cores.split
    const ref = await startReferenceServer('{"ok":true}')
    try {
      // Every thread of a process, not only its main one: GC helpers and libuv's pool too.
      const cpusOf = (pid: number) => [...new Set(readdirSync(`/proc/${pid}/task`).map((t) => /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8'))![1]))]
      const target = { url: ref.url, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: '{"a":1}' }
      const pinned = httpSide('pinned', target, { connections: 2, affinity: { pids: () => [ref.child.pid!], server, generator } })
      const r = await pinned.round(1)
      assert.ok(r.rate > 0)
      assert.equal(r.failed, 0)
      assert.deepEqual(cpusOf(ref.child.pid!), [server])
      assert.deepEqual(cpusOf(loadGeneratorPid()), [generator])
      assert.ok(r.othersCpu! >= 0)
      await httpSide('unpinned', target, { connections: 2, affinity: { pids: () => [ref.child.pid!], server: all, generator: all } }).round(1)
      assert.deepEqual(cpusOf(ref.child.pid!), [all])
      assert.deepEqual(cpusOf(loadGeneratorPid()), [all])
    } finally {
      await ref.close()
    }
  })

  it('a probing reference server reports its GC and event-loop delay since the last report', async function () {
    this.timeout(30_000)
    const ref = await startReferenceServer('{"ok":true}', { probe: true })
    try {
      const pid = ref.child.pid!
      const before = schedstat(pid)
      const busy0 = machineCpuMs()
      await ref.probe()
      const r = await runLoad({ url: ref.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pad: 'x'.repeat(2000) }) }, { connections: 4, duration: 1 })
      assert.ok(r.ok > 0)
      const seen = await ref.probe()
      // A second of requests allocates enough for the young generation to be collected.
      assert.ok(seen.gc.minor.count > 0, JSON.stringify(seen.gc))
      assert.ok(seen.gc.minor.ms > 0 && seen.gc.minor.maxMs <= seen.gc.minor.ms)
      const d = seen.loopDelay
      assert.ok(d.p50 > 0 && d.p50 <= d.p99 && d.p99 <= d.max, JSON.stringify(d))
      // The counts start again after each report.
      const next = await ref.probe()
      assert.ok(next.gc.minor.count < seen.gc.minor.count)
      const after = schedstat(pid)
      if (before && after) assert.ok(after.runMs > before.runMs && after.slices > before.slices)
      assert.ok(machineCpuMs() > busy0)
    } finally {
      await ref.close()
    }
  })

  it('refuses fewer than 3 rounds', async () => {
    await assert.rejects(interleave([], { rounds: 2 }), /at least 3 rounds/)
  })
})
