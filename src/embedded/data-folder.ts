// The data folder of `npm start` on the embedded engine (DATA_DIR, default ./.queueworks-data):
//   store.json     which format the folder is in (a folder of another format is refused)
//   lock.json      the running start's pid and its embedded children's (one start per folder)
//   snapshot/      the latest complete snapshot (snapshot.ts)
//   snapshot.new/  a snapshot being written; snapshot.old/ the previous one during the swap
//   journal/       the write journal's segments (journal.ts)
//   journal-damaged/  damaged segments as found, once a start accepted their loss (journal-recovery.ts)
// Everything is checked before anything starts: a folder that cannot be used stops `start` with a
// message saying what is wrong and how to get out (move it aside), never a half-started system.
import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { DamagedSnapshotError, readSnapshot, type Manifest } from './snapshot.ts'

export const STORE_FORMAT = 'queueworks-data'
export const STORE_VERSION = 1

export class DataFolderError extends Error {}

export interface OpenedFolder {
  dir: string
  snapshotDir: string
  /** The checked snapshot to restore, when there is one. */
  snapshot: { manifest: Manifest; files: Map<string, Buffer> } | null
}

function way(dir: string): string {
  return `Move it aside to start with an empty store (mv ${dir} ${dir}.broken-${new Date().toISOString().slice(0, 10)}), point DATA_DIR at another folder, or run start --ephemeral.`
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function cmdline(pid: number): Promise<string> {
  return readFile(`/proc/${pid}/cmdline`, 'utf8').then((s) => s.replace(/\0/g, ' '), () => '')
}

/**
 * Refuse a folder another running start holds; a start that was killed (kill -9) leaves its
 * embedded children running without a parent: they are stopped here, as their parent would have.
 */
async function takeLock(dir: string): Promise<void> {
  const path = join(dir, 'lock.json')
  const held = await readFile(path, 'utf8').then((s) => JSON.parse(s) as { pid: number; children?: number[] }, () => null)
  if (held && held.pid !== process.pid && alive(held.pid) && /main\.ts|queueworks/.test(await cmdline(held.pid))) {
    throw new DataFolderError(`data folder ${dir} is in use by another running start (pid ${held.pid}). Stop it first, or set DATA_DIR to another folder.`)
  }
  for (const pid of held?.children ?? []) {
    if (alive(pid) && /jongodb|redis-server/.test(await cmdline(pid))) {
      try {
        // The recorded pid is the service's guard, which leads a process group of its own
        // (child.ts): the group, so that the service goes too, not only its guard.
        process.kill(-pid, 'SIGKILL')
      } catch {
        /* gone meanwhile */
      }
    }
  }
  await writeFile(path, JSON.stringify({ pid: process.pid, children: [] }))
}

/** Record the embedded children, so that a start after a kill -9 can stop what this one left. */
export async function recordChildren(dir: string, children: number[]): Promise<void> {
  await writeFile(join(dir, 'lock.json'), JSON.stringify({ pid: process.pid, children }))
}

export async function releaseLock(dir: string): Promise<void> {
  await rm(join(dir, 'lock.json'), { force: true })
}

/** Open (or create) the folder, finish or undo an interrupted snapshot swap, and check the snapshot. */
export async function openDataFolder(path: string): Promise<OpenedFolder> {
  const dir = resolve(path)
  const storeFile = join(dir, 'store.json')
  if (!existsSync(dir)) await mkdir(dir, { recursive: true })
  const entries = await readdir(dir)
  if (!entries.includes('store.json')) {
    if (entries.length) throw new DataFolderError(`DATA_DIR ${dir} is not empty and is not a queueworks data folder (no store.json). ${way(dir)}`)
    await writeFile(storeFile, JSON.stringify({ format: STORE_FORMAT, version: STORE_VERSION, created_at: new Date().toISOString() }, null, 2))
  }
  let store: { format?: string; version?: number }
  try {
    store = JSON.parse(await readFile(storeFile, 'utf8')) as typeof store
  } catch {
    throw new DataFolderError(`${storeFile} is damaged (not valid JSON). ${way(dir)}`)
  }
  if (store.format !== STORE_FORMAT) throw new DataFolderError(`${dir} is not a queueworks data folder (${storeFile} names format ${JSON.stringify(store.format)}). ${way(dir)}`)
  if (store.version !== STORE_VERSION) {
    throw new DataFolderError(`${dir} was written by another version of queueworks (data format ${store.version}; this build reads ${STORE_VERSION}). ${way(dir)}`)
  }
  await takeLock(dir)

  const snapshotDir = join(dir, 'snapshot')
  // An interrupted swap: snapshot.old without snapshot means the new one never got in place.
  if (!existsSync(snapshotDir) && existsSync(join(dir, 'snapshot.old'))) await rename(join(dir, 'snapshot.old'), snapshotDir)
  await rm(join(dir, 'snapshot.old'), { recursive: true, force: true })
  await rm(join(dir, 'snapshot.new'), { recursive: true, force: true })

  let snapshot: OpenedFolder['snapshot'] = null
  if (existsSync(snapshotDir)) {
    try {
      snapshot = await readSnapshot(snapshotDir)
    } catch (err) {
      if (!(err instanceof DamagedSnapshotError)) throw err
      await releaseLock(dir)
      throw new DataFolderError(`the snapshot in ${snapshotDir} is damaged: ${err.message}. ${way(dir)}`)
    }
  }
  return { dir, snapshotDir, snapshot }
}

/** Put a freshly written snapshot.new in place of snapshot (each step a rename, so a crash at any point leaves one whole snapshot). */
export async function swapIn(dir: string): Promise<void> {
  const cur = join(dir, 'snapshot')
  const old = join(dir, 'snapshot.old')
  if (existsSync(cur)) await rename(cur, old)
  await rename(join(dir, 'snapshot.new'), cur)
  await rm(old, { recursive: true, force: true })
}
