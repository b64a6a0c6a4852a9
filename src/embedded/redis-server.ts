// A private redis-server on a free loopback port, for local runs and tests.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import getPort from 'get-port'
import { logger } from '../platform/logger.ts'
import { spawnUntilReady, type StartedChild } from './child.ts'

function findRedisServer(): string | null {
  try {
    return execFileSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).trim() || null
  } catch {
    return null
  }
}

/** On Debian/Ubuntu as root, install the package; anywhere else, say how and stop. */
function ensureRedisServer(): string {
  const found = findRedisServer()
  if (found) return found
  const isDebian = existsSync('/etc/debian_version')
  if (isDebian && process.getuid?.() === 0) {
    logger.warn('redis-server not found on PATH: installing the Debian package redis-server with apt-get')
    execFileSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server'], {
      stdio: 'inherit',
    })
    const again = findRedisServer()
    if (again) return again
  }
  throw new Error(
    'redis-server is not installed. Install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) or set REDIS_URL.',
  )
}

export interface EmbeddedRedis {
  url: string
  port: number
  child: StartedChild
}

/** Tries with fresh free ports when the probed one was taken before redis-server bound it. */
const PORT_ATTEMPTS = 3

/**
 * `port`: where to listen (a restart on the same address in fault tests, benchmarks); otherwise a
 * free loopback port other than `avoid` (ports this process was told to give its own services).
 * redis-server cannot bind port 0 (that turns TCP off), so the port is probed first; another
 * process can take it between the probe and the bind, and then the next attempt takes another one.
 */
export async function startRedisServer(opts: { port?: number; dir?: string; appendonly?: boolean; avoid?: number[] } = {}): Promise<EmbeddedRedis> {
  const bin = ensureRedisServer()
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'qw-redis-'))
  if (opts.port !== undefined) return startOn(bin, opts.port, dir, opts.appendonly)
  for (let attempt = 1; ; attempt++) {
    const port = await getPort({ host: '127.0.0.1', exclude: opts.avoid })
    try {
      return await startOn(bin, port, dir, opts.appendonly)
    } catch (err) {
      if (attempt >= PORT_ATTEMPTS || !/Address already in use|Could not create server TCP listening socket/.test(String(err))) throw err
      logger.warn({ port }, 'embedded redis-server: the probed port was taken before it could bind; trying another')
    }
  }
}

async function startOn(bin: string, port: number, dir: string, appendonly: boolean | undefined): Promise<EmbeddedRedis> {
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--save', '',
    '--appendonly', appendonly === false ? 'no' : 'yes',
    '--appendfsync', 'everysec',
    '--maxmemory-policy', 'noeviction',
    '--protected-mode', 'yes',
  ]
  const { child } = await spawnUntilReady(bin, args, (line) => (/Ready to accept connections/.test(line) ? true : undefined))
  return { url: `redis://127.0.0.1:${port}`, port, child }
}
