// The CLI's own refusals: a worker --concurrency outside 1–256, and the api and worker roles
// started without REDIS_URL or MONGO_URL (only `start` embeds them). Each is a clear one-line
// error and a non-zero exit, before anything connects or listens.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { parseCommand } from '../src/main.ts'

/** Run `src/main.ts …args` with exactly the given store URLs (none inherited from this process). */
function cli(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stderr: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' }
  delete base.REDIS_URL
  delete base.MONGO_URL
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { env: { ...base, ...env }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (b) => (stderr += b))
  return new Promise((r) => child.on('close', (status) => r({ status, stderr })))
}

describe('ops: CLI refusals', function () {
  this.timeout(60_000)

  it('worker --concurrency must be an integer from 1 to 256', () => {
    for (const bad of ['0', '-1', '1.5', 'abc', '257', '1e3', '', ' ']) {
      assert.throws(() => parseCommand(['worker', `--concurrency=${bad}`]), /^Error: --concurrency must be an integer from 1 to 256$/, JSON.stringify(bad))
    }
    assert.deepEqual(parseCommand(['worker', '--concurrency', '1']), { cmd: 'worker', queues: [], concurrency: 1 })
    assert.deepEqual(parseCommand(['worker', '--queues', 'a, b', '--concurrency', '256']), { cmd: 'worker', queues: ['a', 'b'], concurrency: 256 })
    assert.deepEqual(parseCommand(['worker']), { cmd: 'worker', queues: [], concurrency: undefined })
  })

  // Real processes, few of them: each loads the whole application through tsx.
  it('a worker process given --concurrency 0 exits 1 naming the option', async () => {
    const r = await cli(['worker', '--concurrency', '0'], { REDIS_URL: 'redis://127.0.0.1:1', MONGO_URL: 'mongodb://127.0.0.1:1' })
    assert.equal(r.status, 1, r.stderr)
    assert.equal(r.stderr.trim(), 'error: --concurrency must be an integer from 1 to 256')
  })

  it('worker without either URL and api without REDIS_URL exit 1 saying what they need', async () => {
    const [worker, api] = await Promise.all([cli(['worker']), cli(['api', '--service', 'invoice'], { MONGO_URL: 'mongodb://127.0.0.1:1' })])
    for (const [role, r] of [['worker', worker], ['api', api]] as const) {
      assert.equal(r.status, 1, `${role}: ${r.stderr}`)
      assert.equal(r.stderr.trim(), `error: the ${role} role needs REDIS_URL and MONGO_URL (use "start" for embedded defaults)`)
    }
  })
})
