// Where a benchmark listens and keeps its files, so that it can run beside another copy of the
// system (docs/benchmarks.md, "Ports and folders"). BENCH_PORT_BASE: ports are taken one after
// another from it (a taken one is an error, not silently moved); unset, each is a free port the OS
// picks. BENCH_DATA_DIR: the folder the benchmark's data folders are made in (a fresh one inside
// it per run, removed or left as before); unset, the system's temporary folder.
import { mkdirSync, mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import getPort from 'get-port'
import { startMongoEngine, type EmbeddedMongo } from '../../../src/embedded/mongo-engine.ts'
import { startRedisServer, type EmbeddedRedis } from '../../../src/embedded/redis-server.ts'

const base = process.env.BENCH_PORT_BASE ? Number(process.env.BENCH_PORT_BASE) : undefined
if (base !== undefined && !(Number.isInteger(base) && base > 0 && base < 65_000)) {
  throw new Error(`BENCH_PORT_BASE must be a port number (1–64999), got "${process.env.BENCH_PORT_BASE}"`)
}
let next = base

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })
}

/** The next port of BENCH_PORT_BASE, or a free one. */
export async function benchPort(): Promise<number> {
  if (next === undefined) return getPort({ host: '127.0.0.1' })
  const port = next++
  // Two copies given the same base must not end up measuring each other's servers.
  if (!(await isFree(port))) throw new Error(`port ${port} (from BENCH_PORT_BASE=${base}) is taken; choose another base`)
  return port
}

/** A fresh folder for one run's data, inside BENCH_DATA_DIR or the temporary folder. */
export function benchDir(name: string): string {
  const parent = process.env.BENCH_DATA_DIR || tmpdir()
  mkdirSync(parent, { recursive: true })
  return mkdtempSync(join(parent, `qw-bench-${name}-`))
}

/** A redis-server for the benchmark, on a bench port, its files in a bench folder. */
export async function benchRedis(opts: { appendonly?: boolean } = {}): Promise<EmbeddedRedis> {
  return startRedisServer({ ...opts, port: await benchPort(), dir: benchDir('redis') })
}

/** The embedded MongoDB-compatible engine on a bench port (it keeps its data in memory). */
export async function benchMongo(): Promise<EmbeddedMongo> {
  return startMongoEngine({ port: await benchPort() })
}

/**
 * REDIS_URL and MONGO_URL when set, else an embedded redis-server (no AOF) and engine started here:
 * their stops are added to `stops`, and their pids to `pids` (the processes whose CPU an invoice
 * costs, for the benches that measure it).
 */
export async function benchStores(stops: Array<() => Promise<void>>, pids: Record<string, number>): Promise<{ redisUrl: string; mongoUrl: string }> {
  let redisUrl = process.env.REDIS_URL
  if (!redisUrl) {
    const r = await benchRedis({ appendonly: false })
    stops.push(() => r.child.stop())
    redisUrl = r.url
    pids.redis = r.child.proc.pid!
  }
  let mongoUrl = process.env.MONGO_URL
  if (!mongoUrl) {
    const m = await benchMongo()
    stops.push(() => m.child.stop())
    mongoUrl = m.url
    pids.mongo = m.child.proc.pid!
  }
  return { redisUrl, mongoUrl }
}
