// The caller's project for a management route: a project of another account answers as one that
// does not exist, so a project id of someone else cannot be told apart from an unknown one.
import type { Context } from 'koa'
import type { Db } from 'mongodb'
import { accountOf } from '../platform/http/auth.ts'
import { notFound } from '../platform/http/errors.ts'
import { getProject, type ProjectDoc } from './store/project-store.ts'

export const PROJECT_NOT_FOUND = 'Project not found'

/** The authenticated account's project `id`, or a 404 `Project not found`. */
export async function ownProject(db: Db, ctx: Context, id: string): Promise<ProjectDoc> {
  const p = await getProject(db, accountOf(ctx)._id, id)
  if (!p) throw notFound(PROJECT_NOT_FOUND)
  return p
}
