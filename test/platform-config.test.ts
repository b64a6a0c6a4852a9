// Configuration: parsed once from the environment; a bad value fails with a message naming the
// variable, in loadConfig and in the CLI.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { loadConfig } from '../src/platform/config.ts'
import { forwardLeaseMs } from '../src/webhooks/forward/forward-claim.ts'

describe('platform: config', () => {
  const bad: [string, Record<string, string>][] = [
    ['INVOICE_PORT', { INVOICE_PORT: 'abc' }],
    ['INVOICE_PORT', { INVOICE_PORT: '70000' }],
    ['RENDER_TIMEOUT_MS', { RENDER_TIMEOUT_MS: '0' }],
    ['JOB_LOCK_MS', { JOB_LOCK_MS: '1.5' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'maybe' }],
    ['OUTBOUND_ALLOW_PRIVATE', { OUTBOUND_ALLOW_PRIVATE: 'sometimes' }],
    ['NODE_ENV', { NODE_ENV: 'prod' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['RENDER_CONCURRENCY', { RENDER_CONCURRENCY: '1000' }],
    ['WORKER_PROCESSES', { WORKER_PROCESSES: '-1' }],
    ['INVOICE_PUBLIC_URL', { INVOICE_PUBLIC_URL: 'not a url' }],
    ['ADMIN_TOKEN', { ADMIN_TOKEN: 'short' }],
    ['CORS_MANAGEMENT_ORIGINS', { CORS_MANAGEMENT_ORIGINS: 'https://admin.example.com/login' }],
    ['CORS_MANAGEMENT_ORIGINS', { CORS_MANAGEMENT_ORIGINS: '*' }],
    // A claim that ran out before its attempt could time out would let a second run send.
    ['WEBHOOK_FORWARD_LEASE_MS', { WEBHOOK_FORWARD_LEASE_MS: '10000' }],
    ['WEBHOOK_FORWARD_LEASE_MS', { WEBHOOK_FORWARD_LEASE_MS: '5000', WEBHOOK_FORWARD_TIMEOUT_MS: '8000' }],
  ]
  for (const [name, env] of bad) {
    it(`${name}=${Object.values(env)[0]} fails, naming ${name}`, () => {
      assert.throws(() => loadConfig(env), (e: Error) => e.message.startsWith('Invalid configuration: ') && e.message.includes(name))
    })
  }

  it('defaults: ports 3001-3003, a 30 s render wait, private targets allowed only outside production', () => {
    const c = loadConfig({})
    assert.equal(c.INVOICE_PORT, 3001)
    assert.equal(c.FLAGS_PORT, 3002)
    assert.equal(c.WEBHOOKS_PORT, 3003)
    assert.equal(c.RENDER_TIMEOUT_MS, 30_000)
    assert.equal(c.TRUST_PROXY, false)
    assert.equal(c.outboundAllowPrivate, true)
    assert.equal(loadConfig({ NODE_ENV: 'production' }).outboundAllowPrivate, false)
    assert.equal(loadConfig({ NODE_ENV: 'production', OUTBOUND_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate, true)
    assert.equal(loadConfig({ OUTBOUND_ALLOW_PRIVATE: 'false' }).outboundAllowPrivate, false)
  })

  it('WEBHOOK_FORWARD_LEASE_MS: unset means the forward timeout + 20 s; above the timeout it is kept', () => {
    assert.equal(forwardLeaseMs(loadConfig({})), 30_000)
    assert.equal(forwardLeaseMs(loadConfig({ WEBHOOK_FORWARD_TIMEOUT_MS: '3000' })), 23_000)
    assert.equal(forwardLeaseMs(loadConfig({ WEBHOOK_FORWARD_TIMEOUT_MS: '3000', WEBHOOK_FORWARD_LEASE_MS: '3001' })), 3001)
  })

  it('parses numbers and booleans from strings; empty values count as unset', () => {
    const c = loadConfig({ INVOICE_PORT: '4001', TRUST_PROXY: 'yes', RENDER_TIMEOUT_MS: '1500', REDIS_URL: '' })
    assert.equal(c.INVOICE_PORT, 4001)
    assert.equal(c.TRUST_PROXY, true)
    assert.equal(c.RENDER_TIMEOUT_MS, 1500)
    assert.equal(c.REDIS_URL, undefined)
  })

  it('CORS_MANAGEMENT_ORIGINS: none by default; a list is normalised to what browsers send', () => {
    assert.deepEqual(loadConfig({}).CORS_MANAGEMENT_ORIGINS, [])
    assert.deepEqual(loadConfig({ CORS_MANAGEMENT_ORIGINS: 'https://Admin.Example.com:443/, http://localhost:5173' }).CORS_MANAGEMENT_ORIGINS, [
      'https://admin.example.com',
      'http://localhost:5173',
    ])
  })

  it('the CLI exits with one clear line naming the bad variable', function () {
    this.timeout(60_000)
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'api', '--service', 'invoice'], {
      env: { ...process.env, INVOICE_PORT: 'abc', LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 50_000,
    })
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^error: Invalid configuration: INVOICE_PORT: /m)
  })
})
