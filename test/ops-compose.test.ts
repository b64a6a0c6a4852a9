// docker-compose.yml and the Dockerfile cannot run here (no Docker engine): parse them and check
// that services, ports, commands, env and healthchecks agree with the CLI and the config schema.
// Every compose shape (base, + Sentinel, + Cluster) is also validated and merged by Debian's
// `docker-compose config`, and the proxy's Caddyfile is parsed by Debian's `caddy adapt`.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { JOBS } from '../jobs/index.ts'
import { parseCommand } from '../src/main.ts'
import { PRICES_USD, type Service } from '../src/platform/plans.ts'
import { loadConfig } from '../src/platform/config.ts'
import { SERVICES } from '../src/services.ts'

/** Compose interpolation as `docker compose` does it with nothing set: ${X:-default} → default. */
function interpolate(v: unknown): string {
  return String(v).replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_m, _name, def) => def ?? '')
}

const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as {
  services: Record<string, any>
  volumes: Record<string, unknown>
}
const dockerfile = readFileSync('Dockerfile', 'utf8')
const envOf = (name: string) => Object.fromEntries(Object.entries(compose.services[name].environment ?? {}).map(([k, v]) => [k, interpolate(v)]))

/** A Redis data node as BullMQ needs it: AOF, a memory bound, and writes refused rather than keys evicted. */
function assertRedisNode(name: string, command: string[]): void {
  const cmd = command.map(interpolate).join(' ')
  assert.match(cmd, /^redis-server /, name)
  assert.match(cmd, /--appendonly yes/, name)
  assert.match(cmd, /--maxmemory \d+[kmg]b\b/, `${name}: maxmemory set`)
  assert.match(cmd, /--maxmemory-policy noeviction/, name)
}

const healthUrl = (name: string) => /fetch\('(http:\/\/127\.0\.0\.1:(\d+)\/readyz)'\)/.exec(compose.services[name].healthcheck.test.join(' '))

describe('ops: docker-compose.yml and Dockerfile agree with the CLI and config', () => {
  const apps = Object.keys(compose.services).filter((n) => compose.services[n].build)

  it('runs mongo:7 and redis:7 with AOF, a maxmemory and noeviction, both with healthchecks and volumes', () => {
    assert.equal(compose.services.mongo.image, 'mongo:7')
    assert.equal(compose.services.redis.image, 'redis:7')
    assertRedisNode('redis', compose.services.redis.command)
    for (const s of ['mongo', 'redis']) {
      assert.ok(compose.services[s].healthcheck?.test, `${s} healthcheck`)
      const [vol] = compose.services[s].volumes[0].split(':')
      assert.ok(vol in compose.volumes, `${s} volume ${vol} is declared`)
    }
  })

  it('every app container runs the Dockerfile entry point with valid CLI arguments', () => {
    const entry = /^ENTRYPOINT \["node", "--import", "tsx", "([^"]+)"\]$/m.exec(dockerfile)
    assert.ok(entry, 'exec-form ENTRYPOINT running a TypeScript entry with tsx')
    assert.equal(entry[1], 'src/main.ts')
    for (const dir of ['src', 'jobs', 'workers']) assert.match(dockerfile, new RegExp(`^COPY ${dir} \\./${dir}$`, 'm'))
    assert.ok(existsSync(entry[1]))
    for (const name of apps) {
      assert.ok(parseCommand(compose.services[name].command), `${name}: ${compose.services[name].command.join(' ')}`)
    }
  })

  it('has one api container per service, on the port the config gives it, probed on /readyz', () => {
    const known = Object.keys(PRICES_USD) as Service[]
    const registered = SERVICES.map((s) => s.name)
    const served: string[] = []
    for (const name of apps) {
      const cmd = parseCommand(compose.services[name].command)!
      if (cmd.cmd !== 'api') continue
      assert.equal(cmd.services.length, 1, `${name} runs exactly one service`)
      const svcName = cmd.services[0]!
      assert.ok(known.includes(svcName as Service), `${name}: unknown service ${svcName}`)
      served.push(svcName)
      const config = loadConfig(envOf(name))
      const port = { invoice: config.INVOICE_PORT, flags: config.FLAGS_PORT, webhooks: config.WEBHOOKS_PORT }[svcName as Service]
      const def = SERVICES.find((s) => s.name === svcName)
      assert.ok(def, `${name}: service ${svcName} is not registered in src/services.ts`)
      assert.equal(def.port(config), port)
      assert.equal(compose.services[name].ports, undefined, `${name}: published ports would collide under --scale`)
      assert.equal(compose.services[name].container_name, undefined, `${name}: a fixed name prevents --scale`)
      assert.equal(config.TRUST_PROXY, true, `${name} sits behind the proxy and takes the client address from X-Forwarded-For`)
      assert.equal(config.HOST, '0.0.0.0', `${name} listens beyond the container's loopback`)
      assert.equal(Number(healthUrl(name)?.[2]), port, `${name} healthcheck probes its own port`)
      assert.equal(config.NODE_ENV, 'production')
    }
    assert.deepEqual(served.sort(), [...known].sort(), 'the three APIs')
    for (const r of registered) assert.ok(served.includes(r), `registered service ${r} has a container`)
  })

  it('every app service may export queue depth (an export lease picks one process system-wide)', () => {
    for (const n of apps) assert.equal(loadConfig(envOf(n)).QUEUE_METRICS, true, n)
  })

  it('the worker service is scalable, runs every queue, and is probed on its WORKER_PORT', () => {
    const w = compose.services.worker
    const cmd = parseCommand(w.command)
    assert.ok(cmd?.cmd === 'worker', `the worker service runs ${JSON.stringify(w.command)}`)
    // No --queues means every queue; a list must name them all.
    const known = JOBS.map((j) => j.queue)
    if (cmd.queues.length) assert.deepEqual([...cmd.queues].sort(), [...known].sort())
    assert.equal(w.ports, undefined, 'published ports would collide under --scale')
    assert.equal(w.container_name, undefined, 'a fixed name prevents --scale')
    const config = loadConfig(envOf('worker'))
    assert.ok(config.WORKER_PORT)
    assert.equal(Number(healthUrl('worker')?.[2]), config.WORKER_PORT)
  })

  it('app containers share one environment that the config schema accepts, wait for healthy stores, and drain before SIGKILL', () => {
    for (const name of apps) {
      const s = compose.services[name]
      const config = loadConfig(envOf(name))
      assert.equal(config.REDIS_URL, 'redis://redis:6379')
      assert.equal(config.MONGO_URL, 'mongodb://mongo:27017')
      assert.equal(config.ADMIN_TOKEN, undefined, 'dashboard off unless ADMIN_TOKEN is given')
      assert.deepEqual(s.depends_on, { mongo: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } })
      const grace = Number(/^(\d+)s$/.exec(s.stop_grace_period)?.[1]) * 1000
      assert.ok(grace > config.SHUTDOWN_TIMEOUT_MS + 2_000, `${name}: stop_grace_period ${s.stop_grace_period} vs SHUTDOWN_TIMEOUT_MS`)
    }
    // A token given to compose reaches the config (and must satisfy its length rule).
    assert.throws(() => loadConfig({ ...envOf('invoice'), ADMIN_TOKEN: 'short' }), /ADMIN_TOKEN/)
  })
})

/** `docker-compose config` of the given files: validated by Compose itself, overrides merged. */
function composeConfig(files: string[]): { services: Record<string, any>; volumes?: Record<string, unknown> } {
  const args = files.flatMap((f) => ['-f', f])
  // -q fails on an invalid file; the full output is the merged model Compose would run.
  execFileSync('docker-compose', [...args, 'config', '-q'], { stdio: ['ignore', 'ignore', 'pipe'] })
  return parse(execFileSync('docker-compose', [...args, 'config'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
}

const API_PORTS: Record<Service, number> = { invoice: 3001, flags: 3002, webhooks: 3003 }
const APP_SERVICES = ['invoice', 'flags', 'webhooks', 'worker']
const SHAPES: Record<string, string[]> = {
  base: ['docker-compose.yml'],
  sentinel: ['docker-compose.yml', 'docker-compose.sentinel.yml'],
  cluster: ['docker-compose.yml', 'docker-compose.cluster.yml'],
}

describe('ops: every compose shape is valid for docker-compose and scales behind the proxy', () => {
  for (const [shape, files] of Object.entries(SHAPES)) {
    describe(shape, () => {
      let model: ReturnType<typeof composeConfig>
      before(() => {
        model = composeConfig(files)
      })

      it('only the proxy publishes ports: 3001-3003, one per API', () => {
        const publishing = Object.keys(model.services).filter((n) => model.services[n].ports)
        assert.deepEqual(publishing, ['proxy'])
        const published = model.services.proxy.ports.map((p: any) => (typeof p === 'string' ? p : `${p.published}:${p.target}`))
        assert.deepEqual(published.sort(), Object.values(API_PORTS).map((p) => `${p}:${p}`))
        for (const n of APP_SERVICES) assert.equal(model.services[n].container_name, undefined, `${n} must scale`)
      })

      it('the proxy is the official Caddy image with the committed Caddyfile and waits for healthy APIs', () => {
        const proxy = model.services.proxy
        assert.match(proxy.image, /^caddy:2(\.|$)/)
        assert.ok(proxy.volumes.some((v: string) => /\/deploy\/Caddyfile:\/etc\/caddy\/Caddyfile:ro$/.test(v)), proxy.volumes.join(' '))
        assert.deepEqual(proxy.depends_on, { invoice: { condition: 'service_healthy' }, flags: { condition: 'service_healthy' }, webhooks: { condition: 'service_healthy' } })
      })

      it('APIs trust the proxy; every app is probed on /readyz; every Redis node is bounded and never evicts', () => {
        for (const n of APP_SERVICES) {
          const config = loadConfig(Object.fromEntries(Object.entries(model.services[n].environment).map(([k, v]) => [k, String(v)])))
          assert.equal(config.TRUST_PROXY, n !== 'worker', `${n}: TRUST_PROXY only behind the proxy`)
          const probe = model.services[n].healthcheck.test.join(' ')
          assert.match(probe, /\/readyz'/, n)
          assert.ok(probe.includes(`127.0.0.1:${n === 'worker' ? config.WORKER_PORT : API_PORTS[n as Service]}/`), `${n} probes its own port`)
        }
        const dataNodes = Object.keys(model.services).filter((n) => model.services[n].command?.[0] === 'redis-server')
        assert.ok(dataNodes.length >= (shape === 'base' ? 1 : shape === 'sentinel' ? 2 : 3))
        for (const n of dataNodes) assertRedisNode(n, model.services[n].command)
      })
    })
  }

  it('Sentinel shape: a replica of redis, a Sentinel monitoring it, every app finding the master through Sentinel', () => {
    const m = composeConfig(SHAPES.sentinel!)
    assert.deepEqual(m.services['redis-replica'].command.slice(0, 3), ['redis-server', '--replicaof', 'redis'])
    const sentinel = m.services.sentinel.command.join(' ')
    assert.match(sentinel, /'sentinel monitor mymaster redis 6379 1'/)
    assert.match(sentinel, /exec redis-sentinel \/data\/sentinel\.conf$/)
    assert.ok(m.services.sentinel.healthcheck.test.includes('26379'))
    for (const n of APP_SERVICES) {
      assert.equal(m.services[n].environment.REDIS_URL, 'redis+sentinel://sentinel:26379/mymaster', n)
      assert.deepEqual(m.services[n].depends_on.sentinel, { condition: 'service_healthy' }, n)
    }
  })

  it('Cluster shape: three cluster nodes, formed once by an init job, named as seeds by every app', () => {
    const m = composeConfig(SHAPES.cluster!)
    const nodes = Object.keys(m.services).filter((n) => m.services[n].command?.join(' ').includes('--cluster-enabled yes'))
    assert.deepEqual(nodes.sort(), ['redis', 'redis-2', 'redis-3'])
    for (const n of nodes) assert.ok(m.services[n].command.join(' ').includes(`--cluster-announce-hostname ${n} `), n)
    const init = m.services['redis-cluster-init'].command.join(' ')
    for (const n of nodes) assert.ok(init.includes(`getent hosts ${n} `), `init joins ${n}`)
    assert.match(init, /--cluster create .* --cluster-yes$/)
    for (const n of APP_SERVICES) {
      assert.equal(m.services[n].environment.REDIS_URL, `redis+cluster://${nodes.map((x) => `${x}:6379`).join(',')}`, n)
      assert.deepEqual(m.services[n].depends_on['redis-cluster-init'], { condition: 'service_completed_successfully' }, n)
    }
  })
})

describe('ops: deploy/Caddyfile routes every API port to every replica of its service', () => {
  it('caddy adapt: one server per API port, round-robin over DNS A records of that service, re-read within 5 s', () => {
    const json = JSON.parse(execFileSync('caddy', ['adapt', '--config', 'deploy/Caddyfile'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
    assert.equal(json.admin?.disabled, true, 'no admin endpoint in the proxy container')
    const servers = Object.values(json.apps.http.servers) as any[]
    const routed: Record<string, string> = {}
    for (const srv of servers) {
      assert.equal(srv.listen.length, 1)
      const proxy = srv.routes[0].handle.find((h: any) => h.handler === 'reverse_proxy')
      assert.ok(proxy, `${srv.listen[0]} proxies`)
      assert.equal(proxy.dynamic_upstreams.source, 'a')
      assert.ok(proxy.dynamic_upstreams.refresh <= 5e9)
      assert.equal(proxy.load_balancing.selection_policy.policy, 'round_robin')
      assert.ok(proxy.load_balancing.try_duration > 0, 'a request to a replica that is gone is retried on another')
      assert.equal(proxy.trusted_proxies, undefined, 'client-sent X-Forwarded-For is replaced, never trusted')
      routed[srv.listen[0]] = `${proxy.dynamic_upstreams.name}:${proxy.dynamic_upstreams.port}`
    }
    assert.deepEqual(routed, Object.fromEntries(Object.entries(API_PORTS).map(([svc, port]) => [`:${port}`, `${svc}:${port}`])))
  })
})
