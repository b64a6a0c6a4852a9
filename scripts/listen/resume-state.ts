// Where `listen` remembers, per endpoint and local target, the last capture it delivered, so a
// restart delivers what arrived meanwhile (docs/webhooks-tools.md, "`listen` CLI"). One small JSON file
// for every endpoint and target of the user; written whole to a temporary name and renamed, so a
// kill mid-write leaves the previous version, never half a file. The temporary file gets a random
// name and is created exclusively (O_EXCL, O_NOFOLLOW): a name planted beforehand in the state
// folder — a symlink to a file elsewhere — makes the open fail instead of writing through it.
import { randomBytes } from 'node:crypto'
import { closeSync, constants, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, join } from 'node:path'

export interface Remembered {
  last_id: number
  at: string
}

/** --state-file, else QUEUEWORKS_LISTEN_STATE, else the XDG state directory. */
export function stateFilePath(flag: string | undefined): string {
  if (flag) return flag
  if (process.env.QUEUEWORKS_LISTEN_STATE) return process.env.QUEUEWORKS_LISTEN_STATE
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state')
  return join(base, 'queueworks', 'listen-state.json')
}

export const stateKey = (api: string, token: string, forwardTo: string) => `${api} ${token} ${forwardTo}`

function readAll(file: string): Record<string, Remembered> {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8'))
    return parsed && typeof parsed === 'object' ? parsed : {}
  } catch {
    // Missing (first run) or unreadable: nothing remembered; the next write replaces it.
    return {}
  }
}

export function recall(file: string, key: string): Remembered | null {
  const r = readAll(file)[key]
  return r && Number.isSafeInteger(r.last_id) ? r : null
}

/** Records `id` as delivered unless a later one already is (a --since or --replay-last re-send of
 * older captures must not move the resume point back). Re-reads the file first so other
 * endpoints' entries, written by other listen processes, are kept. */
export function remember(file: string, key: string, id: number): void {
  const all = readAll(file)
  if ((all[key]?.last_id ?? 0) >= id) return
  all[key] = { last_id: id, at: new Date().toISOString() }
  mkdirSync(dirname(file), { recursive: true })
  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(8).toString('hex')}.tmp`)
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
  try {
    writeFileSync(fd, `${JSON.stringify(all, null, 2)}\n`)
  } catch (err) {
    closeSync(fd)
    rmSync(tmp, { force: true })
    throw err
  }
  closeSync(fd)
  renameSync(tmp, file)
}
