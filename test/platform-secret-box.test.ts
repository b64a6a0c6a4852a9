// Sealed secrets (src/platform/secret-box.ts): a round trip under SECRETS_KEY and under the key kept
// in the database, nothing readable in the sealed form, tampering and a missing key detected.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { openSecret, sealSecret, SECRET_KEYS_COLLECTION } from '../src/platform/secret-box.ts'
import { loadConfig } from '../src/platform/config.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('platform: sealed secrets', () => {
  let sys: TestSystem
  const key = randomBytes(32).toString('base64')
  before(async () => {
    sys = await startSystem({ services: [], workers: false, env: { SECRETS_KEY: key } })
  })
  after(async () => {
    await sys?.stop()
  })

  it('seals with SECRETS_KEY: round trip, a fresh nonce each time, tampering refused, nothing kept in the database', async () => {
    const secret = 'whsec_' + randomBytes(32).toString('base64')
    const a = await sealSecret(sys.platform, secret)
    const b = await sealSecret(sys.platform, secret)
    assert.match(a, /^v1\.env\./)
    assert.notEqual(a, b)
    assert.ok(!a.includes(secret.slice(6)) && !a.includes(Buffer.from(secret).toString('base64url')))
    assert.equal(await openSecret(sys.platform, a), secret)
    const parts = a.split('.')
    const data = Buffer.from(parts[4]!, 'base64url')
    data[0]! ^= 1
    await assert.rejects(openSecret(sys.platform, [...parts.slice(0, 4), data.toString('base64url')].join('.')))
    assert.equal(await sys.platform.db.collection(SECRET_KEYS_COLLECTION).countDocuments(), 0)
    // Another key cannot open it; without SECRETS_KEY it cannot be opened at all.
    const other = { ...sys.platform, config: { ...sys.platform.config, SECRETS_KEY: randomBytes(32).toString('base64') } }
    await assert.rejects(openSecret(other, a))
    await assert.rejects(openSecret({ ...sys.platform, config: { ...sys.platform.config, SECRETS_KEY: undefined } }, a), /SECRETS_KEY, which is not set/)
  })

  it('without SECRETS_KEY seals with one random key kept in the database', async () => {
    const noKey = { ...sys.platform, config: { ...sys.platform.config, SECRETS_KEY: undefined } }
    const sealed = await Promise.all([sealSecret(noKey, 'one'), sealSecret(noKey, 'two')])
    assert.match(sealed[0], /^v1\.db\./)
    assert.deepEqual(await Promise.all(sealed.map((s) => openSecret(noKey, s))), ['one', 'two'])
    assert.equal(await sys.platform.db.collection(SECRET_KEYS_COLLECTION).countDocuments(), 1)
  })

  it('SECRETS_KEY must be 32 bytes of base64', () => {
    assert.throws(() => loadConfig({ SECRETS_KEY: 'c2hvcnQ=' }), /SECRETS_KEY: must be 32 bytes, base64-encoded/)
  })
})
