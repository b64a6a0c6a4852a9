// Deleting a project (DELETE /api/v1/projects/{id}): the project document goes first, so its SDK
// keys stop working and nobody can reach what is left; then everything that was the project's —
// flags, segments, change webhooks and their deliveries, audit history, usage counts — is removed.
// A failure halfway leaves data that no project owns (ids are random: no new project ever takes
// them), which the retention sweeps and TTL indexes remove in time; nothing of it is reachable.
import type { Db } from 'mongodb'
import { logger } from '../platform/logger.ts'
import { deliveries } from './changes/change-hook-delivery-store.ts'
import { webhooks } from './changes/change-hook-store.ts'
import { history } from './changes/history-store.ts'
import { flags } from './store/flag-store.ts'
import { deleteProjectDoc } from './store/project-store.ts'
import { segments } from './store/segment-store.ts'

/** Deletes the account's project and what it held; false if the account has no such project. */
export async function deleteProject(db: Db, accountId: string, projectId: string): Promise<boolean> {
  if (!(await deleteProjectDoc(db, accountId, projectId))) return false
  const steps: [string, () => Promise<unknown>][] = [
    ['flags', () => flags(db).deleteMany({ project_id: projectId })],
    ['segments', () => segments(db).deleteMany({ project_id: projectId })],
    ['webhooks', () => webhooks(db).deleteMany({ project_id: projectId })],
    ['deliveries', () => deliveries(db).deleteMany({ project_id: projectId })],
    ['history', () => history(db).deleteMany({ project_id: projectId })],
    ['usage', () => db.collection('flag_usage').deleteMany({ project_id: projectId })],
    ['last evaluated', () => db.collection('flag_last_evaluated').deleteMany({ project_id: projectId })],
  ]
  for (const [what, step] of steps) {
    await step().catch((err) => logger.warn({ err: String(err), project: projectId, what }, 'deleted project: data left for the sweeps'))
  }
  return true
}
