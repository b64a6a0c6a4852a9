// Sealing of secrets the platform must keep readable (the signing secrets of flag-change webhooks:
// a signature needs the secret itself, so it cannot be stored as a hash like API keys).
// AES-256-GCM with a random 96-bit nonce per secret. The key is SECRETS_KEY when the operator sets
// it (then a copy of the database alone reveals no secret); unset, a random key is generated once
// and kept in the database's `qw_secret_keys`, which keeps secrets out of logs, exports of single
// collections and API answers, but not from someone holding the whole database.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import type { Db } from 'mongodb'
import type { Platform } from './platform.ts'

export const SECRET_KEYS_COLLECTION = 'qw_secret_keys'

interface KeyDoc {
  _id: string
  key: string
}

const dbKeys = new WeakMap<Db, Promise<Buffer>>()

async function databaseKey(db: Db): Promise<Buffer> {
  let p = dbKeys.get(db)
  if (!p) {
    p = db
      .collection<KeyDoc>(SECRET_KEYS_COLLECTION)
      .findOneAndUpdate({ _id: 'default' }, { $setOnInsert: { key: randomBytes(32).toString('base64') } }, { upsert: true, returnDocument: 'after' })
      .then((d) => Buffer.from(d!.key, 'base64'))
    p.catch(() => dbKeys.delete(db))
    dbKeys.set(db, p)
  }
  return p
}

async function keyOf(platform: Platform, which: string): Promise<Buffer> {
  if (which === 'env') {
    if (!platform.config.SECRETS_KEY) throw new Error('a secret was sealed with SECRETS_KEY, which is not set')
    return Buffer.from(platform.config.SECRETS_KEY, 'base64')
  }
  if (which === 'db') return databaseKey(platform.db)
  throw new Error(`unknown secret key "${which}"`)
}

/** `v1.<env|db>.<nonce>.<tag>.<ciphertext>` (base64url parts). */
export async function sealSecret(platform: Platform, plaintext: string): Promise<string> {
  const which = platform.config.SECRETS_KEY ? 'env' : 'db'
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', await keyOf(platform, which), iv)
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return ['v1', which, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.')
}

export async function openSecret(platform: Platform, sealed: string): Promise<string> {
  const [v, which, iv, tag, data] = sealed.split('.')
  if (v !== 'v1' || !which || !iv || !tag || data === undefined) throw new Error('not a sealed secret')
  const decipher = createDecipheriv('aes-256-gcm', await keyOf(platform, which), Buffer.from(iv, 'base64url'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8')
}
