// Real Redis topologies for tests, as operators run them, on free loopback ports in a temp dir:
// a Redis Cluster made with `redis-cli --cluster create` (optionally with replicas), and a master + replica watched by one
// Sentinel (`redis-server --sentinel`, what Debian's redis-sentinel package runs). Each returns
// the REDIS_URL the system is configured with and direct connections for looking inside.
import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePorts } from './ports.ts'
import { Redis } from 'ioredis'
import { spawnUntilReady, type StartedChild } from '../../src/embedded/child.ts'

const run = promisify(execFile)

export interface RedisNode {
  port: number
  child: StartedChild
  /** Start it again after stop()/kill, on the same port and directory. */
  restart(): Promise<void>
  stop(): Promise<void>
}

async function startNode(port: number, dir: string, extra: string[], ready = /Ready to accept connections/): Promise<RedisNode> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no', ...extra]
  const node: RedisNode = {
    port,
    child: (await spawnUntilReady('redis-server', args, (l) => (ready.test(l) ? true : undefined))).child,
    async restart() {
      node.child = (await spawnUntilReady('redis-server', args, (l) => (ready.test(l) ? true : undefined))).child
    },
    stop: () => node.child.stop(),
  }
  return node
}

async function waitUntil(fn: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await fn()) return
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

export interface TestCluster {
  url: string
  nodes: RedisNode[]
  /** One direct (non-cluster) connection per node that was a master when the cluster was made. */
  direct(): Redis[]
  /** The port of the master that serves `key` now, and of its replica (if it has one), as a live node says. */
  shardOf(key: string): Promise<{ master: number; replica?: number }>
  /** The node on this port. */
  node(port: number): RedisNode
  stop(): Promise<void>
}

interface NodeLine {
  id: string
  port: number
  flags: string[]
  masterId: string
  slots: [number, number][]
}

/** `CLUSTER NODES`, parsed: one line per node (`id ip:port@cport flags master … slots`). */
function parseNodes(text: string): NodeLine[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, addr, flags, masterId, , , , , ...slots] = line.split(' ')
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(addr!)![1]),
        flags: flags!.split(','),
        masterId: masterId!,
        slots: slots.filter((x) => /^\d+(-\d+)?$/.test(x)).map((r) => r.split('-').map(Number) as [number, number]).map(([a, b]) => [a, b ?? a] as [number, number]),
      }
    })
}

/**
 * `masters` masters, slots split evenly by redis-cli, each with `replicas` replicas
 * (`--cluster-replicas`). A short node timeout (2 s) so a dead master's replica is promoted within
 * seconds, as Sentinel's `down-after-milliseconds 2000` in startSentinel.
 */
export async function startCluster(masters = 3, replicas = 0): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'qw-cluster-'))
  const nodes: RedisNode[] = []
  const nodeTimeout = replicas > 0 ? '2000' : '5000'
  for (let i = 0; i < masters * (1 + replicas); i++) {
    // The cluster bus gets a free port of its own (by default it is the node's port + 10,000,
    // which nobody checked was free).
    const [port, bus] = await freePorts(2)
    nodes.push(await startNode(port!, dir, ['--cluster-enabled', 'yes', '--cluster-port', String(bus), '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', nodeTimeout]))
  }
  const addrs = nodes.map((n) => `127.0.0.1:${n.port}`)
  await run('redis-cli', ['--cluster', 'create', ...addrs, '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 })
  const all = nodes.map((n) => new Redis(n.port, '127.0.0.1', { lazyConnect: false }))
  all.forEach((c) => c.on('error', () => undefined)) // nodes are killed on purpose
  await waitUntil(async () => (await Promise.all(all.map((c) => c.cluster('INFO')))).every((i) => /cluster_state:ok/.test(String(i))), 30_000, 'cluster_state:ok')
  if (replicas > 0) {
    // Every node knows every replica, and every replica is in sync with its master.
    await waitUntil(
      async () => (await Promise.all(all.map(async (c) => parseNodes(String(await c.cluster('NODES'))).filter((n) => n.flags.includes('slave')).length))).every((k) => k === masters * replicas),
      30_000,
      'every node to see the replicas',
    )
    await waitUntil(
      async () => (await Promise.all(all.map((c) => c.info('replication')))).filter((i) => /master_link_status:up/.test(i)).length === masters * replicas,
      30_000,
      'replicas in sync',
    )
  }
  const roles = await Promise.all(all.map(async (c) => ((await c.call('ROLE')) as string[])[0]))
  const conns = all.filter((_, i) => roles[i] === 'master')
  const live = async (): Promise<Redis> => {
    for (const c of all) if ((await c.ping().catch(() => null)) === 'PONG') return c
    throw new Error('no live cluster node')
  }
  return {
    url: `redis+cluster://${addrs.join(',')}`,
    nodes,
    direct: () => conns,
    async shardOf(key) {
      const c = await live()
      const slot = Number(await c.cluster('KEYSLOT', key))
      const lines = parseNodes(String(await c.cluster('NODES')))
      const master = lines.find((n) => n.flags.includes('master') && !n.flags.includes('fail') && n.slots.some(([a, b]) => slot >= a && slot <= b))
      if (!master) throw new Error(`no master serves slot ${slot}`)
      const replica = lines.find((n) => n.masterId === master.id && !n.flags.includes('fail'))
      return { master: master.port, ...(replica ? { replica: replica.port } : {}) }
    },
    node(port) {
      const n = nodes.find((x) => x.port === port)
      if (!n) throw new Error(`no node on port ${port}`)
      return n
    },
    async stop() {
      for (const c of all) c.disconnect()
      await Promise.all(nodes.map((n) => n.stop()))
    },
  }
}

export interface TestSentinel {
  url: string
  masterName: string
  master: RedisNode
  replica: RedisNode
  sentinel: RedisNode
  /** A direct connection to the sentinel. */
  sentinelConn: Redis
  /** The port of the current master, as the sentinel says. */
  masterPort(): Promise<number>
  stop(): Promise<void>
}

/** 1 master, 1 replica, 1 sentinel (quorum 1); fast failure detection for tests. */
export async function startSentinel(): Promise<TestSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'qw-sentinel-'))
  const masterName = 'qwmaster'
  const [mp, rp, sp] = await freePorts(3)
  const master = await startNode(mp, join(dir), [])
  const replica = await startNode(rp, dir, ['--replicaof', '127.0.0.1', String(mp)])
  const conf = join(dir, 'sentinel.conf')
  writeFileSync(
    conf,
    [
      `port ${sp}`,
      'bind 127.0.0.1',
      'protected-mode no',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${mp} 1`,
      `sentinel down-after-milliseconds ${masterName} 2000`,
      `sentinel failover-timeout ${masterName} 10000`,
      `sentinel parallel-syncs ${masterName} 1`,
      '',
    ].join('\n'),
  )
  const started = await spawnUntilReady('redis-server', [conf, '--sentinel'], (l) => (/\+monitor master/.test(l) ? true : undefined))
  const sentinel: RedisNode = {
    port: sp,
    child: started.child,
    restart: async () => {
      throw new Error('not supported')
    },
    stop: () => started.child.stop(),
  }
  const sentinelConn = new Redis(sp, '127.0.0.1')
  const masterPort = async () => Number(((await sentinelConn.call('SENTINEL', 'get-master-addr-by-name', masterName)) as string[])[1])
  // The failover needs the sentinel to know the replica and the replica to be in sync.
  const replicaConn = new Redis(rp, '127.0.0.1')
  await waitUntil(async () => /master_link_status:up/.test(await replicaConn.info('replication')), 30_000, 'replica in sync')
  replicaConn.disconnect()
  await waitUntil(async () => ((await sentinelConn.call('SENTINEL', 'replicas', masterName)) as unknown[]).length > 0, 30_000, 'sentinel sees the replica')
  return {
    url: `redis+sentinel://127.0.0.1:${sp}/${masterName}`,
    masterName,
    master,
    replica,
    sentinel,
    sentinelConn,
    masterPort,
    async stop() {
      sentinelConn.disconnect()
      await Promise.all([sentinel.stop(), master.stop(), replica.stop()])
    },
  }
}
