// A private redis-server on a free loopback port, for local runs and tests.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import getPort from 'get-port'
import { logger } from '../logger.ts'
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

export async function startRedisServer(opts: { port?: number; dir?: string; appendonly?: boolean; ownGroup?: boolean } = {}): Promise<EmbeddedRedis> {
  const bin = ensureRedisServer()
  const port = opts.port ?? (await getPort({ host: '127.0.0.1' }))
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'qw-redis-'))
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', dir,
    '--save', '',
    '--appendonly', opts.appendonly === false ? 'no' : 'yes',
    '--appendfsync', 'everysec',
    '--maxmemory-policy', 'noeviction',
    '--protected-mode', 'yes',
  ]
  const { child } = await spawnUntilReady(bin, args, (line) => (/Ready to accept connections/.test(line) ? true : undefined), 20_000, opts.ownGroup)
  return { url: `redis://127.0.0.1:${port}`, port, child }
}
