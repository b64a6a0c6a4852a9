// Renaming and deleting an environment (not production). Both touch the project (its environment
// list, where the SDK key lives) and every flag's state in that environment, two collections that
// cannot change in one step; the order is chosen so that a reader never sees an environment
// without its flag states, and leftovers of a step that failed are harmless orphans:
//  - rename: copy each flag's state to the new name, rename in the project, drop the old name's
//    states. A failure before the project step leaves states under a name no environment has.
//  - delete: remove it from the project (its SDK key stops working), then drop its flag states.
// Orphans are removed when an environment of that name is created (clearEnvironmentStates), so a
// new environment never inherits an old one's rules.
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import { flags, type FlagDoc, type FlagEnvironmentState } from './flag-store.ts'
import { environmentNames, getProject, replaceEnvironments, PRODUCTION, type ProjectDoc } from './project-store.ts'

export type EnvironmentChange = { ok: true; project: ProjectDoc } | { ok: false; reason: 'project_not_found' | 'not_found' | 'production' | 'exists' }

const ATTEMPTS = 5

/** Rewrites one flag's environment list with `edit`, compare-and-set on the list it read. */
async function editFlagStates(db: Db, flag: FlagDoc, edit: (list: FlagEnvironmentState[]) => FlagEnvironmentState[]): Promise<void> {
  let current: FlagDoc | null = flag
  for (let attempt = 0; attempt < ATTEMPTS && current; attempt++) {
    const list = current.environments ?? []
    const guard = { environments: list }
    const r = await flags(db).updateOne({ _id: current._id, ...guard } as never, { $set: { environments: edit(list), updated_at: clock.now() }, $inc: { version: 1 } })
    if (r.matchedCount === 1) return
    current = await flags(db).findOne({ _id: flag._id })
  }
  if (current) throw new Error('flag environment states kept racing')
}

/** Every flag of the project holding state under `name`. */
const flagsWithState = (db: Db, projectId: string, name: string) => flags(db).find({ project_id: projectId, 'environments.name': name }).toArray()

/** Drops every flag state of the project stored under `name` (an environment deleted, renamed away, or a leftover). */
export async function clearEnvironmentStates(db: Db, projectId: string, name: string): Promise<void> {
  for (const f of await flagsWithState(db, projectId, name)) await editFlagStates(db, f, (list) => list.filter((e) => e.name !== name))
}

function check(p: ProjectDoc | null, name: string): EnvironmentChange | null {
  if (!p) return { ok: false, reason: 'project_not_found' }
  if (name === PRODUCTION) return { ok: false, reason: 'production' }
  if (!p.environments?.some((e) => e.name === name)) return { ok: false, reason: 'not_found' }
  return null
}

export async function renameEnvironment(db: Db, accountId: string, projectId: string, from: string, to: string): Promise<EnvironmentChange> {
  const p = await getProject(db, accountId, projectId)
  const bad = check(p, from)
  if (bad) return bad
  if (to === from) return { ok: true, project: p! }
  if (environmentNames(p!).includes(to)) return { ok: false, reason: 'exists' }
  // States under the new name can only be orphans: replace them with a copy of the old name's.
  await clearEnvironmentStates(db, p!._id, to)
  for (const f of await flagsWithState(db, p!._id, from)) {
    await editFlagStates(db, f, (list) => {
      const st = list.find((e) => e.name === from)
      return st ? [...list.filter((e) => e.name !== to), { ...st, name: to }] : list
    })
  }
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const cur = await getProject(db, accountId, projectId)
    const again = check(cur, from)
    if (again) return again
    if (environmentNames(cur!).includes(to)) return { ok: false, reason: 'exists' }
    const project = await replaceEnvironments(db, cur!, cur!.environments!.map((e) => (e.name === from ? { ...e, name: to } : e)))
    if (project) {
      await clearEnvironmentStates(db, project._id, from)
      return { ok: true, project }
    }
  }
  throw new Error('environment rename kept racing')
}

export async function deleteEnvironment(db: Db, accountId: string, projectId: string, name: string): Promise<EnvironmentChange> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const p = await getProject(db, accountId, projectId)
    const bad = check(p, name)
    if (bad) return bad
    const project = await replaceEnvironments(db, p!, p!.environments!.filter((e) => e.name !== name))
    if (project) {
      await clearEnvironmentStates(db, project._id, name)
      return { ok: true, project }
    }
  }
  throw new Error('environment deletion kept racing')
}
