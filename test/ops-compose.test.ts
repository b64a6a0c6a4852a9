// docker-compose.yml and the Dockerfile cannot run here (no Docker engine): parse them and check
// that services, ports, commands, env and healthchecks agree with the CLI and the config schema.
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { parse } from 'yaml'
import { JOBS } from '../jobs/index.ts'
import { parseCommand } from '../src/main.ts'
import { PRICES_USD, type Service } from '../src/platform/billing/plans.ts'
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
const healthUrl = (name: string) => /fetch\('(http:\/\/127\.0\.0\.1:(\d+)\/readyz)'\)/.exec(compose.services[name].healthcheck.test.join(' '))

describe('ops: docker-compose.yml and Dockerfile agree with the CLI and config', () => {
  const apps = Object.keys(compose.services).filter((n) => compose.services[n].build)

  it('runs mongo:7 and redis:7 with AOF and noeviction, both with healthchecks and volumes', () => {
    assert.equal(compose.services.mongo.image, 'mongo:7')
    assert.equal(compose.services.redis.image, 'redis:7')
    const redisCmd = compose.services.redis.command.join(' ')
    assert.match(redisCmd, /--appendonly yes/)
    assert.match(redisCmd, /--maxmemory-policy noeviction/)
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
      assert.deepEqual(compose.services[name].ports, [`${port}:${port}`], name)
      assert.equal(config.HOST, '0.0.0.0', `${name} listens beyond the container's loopback`)
      assert.equal(Number(healthUrl(name)?.[2]), port, `${name} healthcheck probes its own port`)
      assert.equal(config.NODE_ENV, 'production')
    }
    assert.deepEqual(served.sort(), [...known].sort(), 'the three APIs')
    for (const r of registered) assert.ok(served.includes(r), `registered service ${r} has a container`)
  })

  it('exactly one container exports queue depth, and it is not the scalable worker', () => {
    const exporters = apps.filter((n) => loadConfig(envOf(n)).QUEUE_METRICS)
    assert.equal(exporters.length, 1)
    assert.notEqual(exporters[0], 'worker')
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
