// Flag-change webhooks of a project (`flag_webhooks`): where a project's flag and segment changes
// are sent. Each has its own signing secret, kept sealed (src/platform/secret-box.ts) because
// signing needs the secret itself; it is shown once, at creation and at each rotation. The per-project plan limit is a
// conditional counter on the project, as for flags and segments.
import type { Db } from 'mongodb'
import { clock } from '../../platform/clock.ts'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import { projects } from '../store/project-store.ts'

export const FLAG_EVENT_TYPES = ['flag.created', 'flag.updated', 'flag.deleted', 'segment.created', 'segment.updated', 'segment.deleted'] as const
export type FlagEventType = (typeof FLAG_EVENT_TYPES)[number]

export interface WebhookDoc {
  _id: string
  project_id: string
  account_id: string
  url: string
  /** Changes of this environment's own state come here; changes shared by all environments go to every webhook. */
  environment: string
  /** Event types sent; null = all. */
  events: FlagEventType[] | null
  description: string
  enabled: boolean
  secret_sealed: string
  secret_hint: string
  created_at: Date
  updated_at: Date
}

export const webhookIndexes: IndexSpec[] = [
  { collection: 'flag_webhooks', indexes: [{ key: { project_id: 1, created_at: 1 }, name: 'project_created' }] },
]

export const webhooks = (db: Db) => db.collection<WebhookDoc>('flag_webhooks')

export function webhookView(h: WebhookDoc) {
  return {
    id: h._id,
    url: h.url,
    environment: h.environment,
    events: h.events,
    description: h.description,
    enabled: h.enabled,
    secret_hint: h.secret_hint,
    created_at: h.created_at.toISOString(),
    updated_at: h.updated_at.toISOString(),
  }
}

export async function listWebhooks(db: Db, projectId: string): Promise<WebhookDoc[]> {
  return webhooks(db).find({ project_id: projectId }).sort({ created_at: 1, _id: 1 }).toArray()
}

export async function getWebhook(db: Db, projectId: string, id: string): Promise<WebhookDoc | null> {
  if (id.length > 64) return null
  return webhooks(db).findOne({ _id: id, project_id: projectId })
}

export type NewWebhook = Pick<WebhookDoc, '_id' | 'url' | 'environment' | 'events' | 'description' | 'enabled' | 'secret_sealed' | 'secret_hint'>

/** Insert if the project has fewer than `limit` webhooks; null at the limit. */
export async function createWebhook(db: Db, projectId: string, accountId: string, w: NewWebhook, limit: number): Promise<WebhookDoc | null> {
  // Documents written before webhooks have no counter: $lt treats a missing field as not less, so it is set first.
  await projects(db).updateOne({ _id: projectId, webhook_count: { $exists: false } }, { $set: { webhook_count: 0 } })
  const slot = await projects(db).updateOne({ _id: projectId, webhook_count: { $lt: limit } }, { $inc: { webhook_count: 1 } })
  if (slot.modifiedCount !== 1) return null
  const now = clock.now()
  const doc: WebhookDoc = { project_id: projectId, account_id: accountId, ...w, created_at: now, updated_at: now }
  try {
    await webhooks(db).insertOne(doc)
  } catch (err) {
    await releaseSlot(db, projectId)
    throw err
  }
  return doc
}

async function releaseSlot(db: Db, projectId: string): Promise<void> {
  await projects(db).updateOne({ _id: projectId, webhook_count: { $gt: 0 } }, { $inc: { webhook_count: -1 } })
}

export async function updateWebhook(db: Db, projectId: string, id: string, change: Partial<Pick<WebhookDoc, 'url' | 'environment' | 'events' | 'description' | 'enabled'>>): Promise<WebhookDoc | null> {
  const set = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined))
  return webhooks(db).findOneAndUpdate({ _id: id, project_id: projectId }, { $set: { ...set, updated_at: clock.now() } }, { returnDocument: 'after' })
}

/**
 * A new signing secret in place of the old, which signs nothing from then on: every attempt opens
 * the secret it signs with, so retries of pending deliveries are signed with the new one too.
 * Null: no such webhook.
 */
export async function replaceWebhookSecret(db: Db, projectId: string, id: string, secret: Pick<WebhookDoc, 'secret_sealed' | 'secret_hint'>): Promise<WebhookDoc | null> {
  if (id.length > 64) return null
  return webhooks(db).findOneAndUpdate({ _id: id, project_id: projectId }, { $set: { ...secret, updated_at: clock.now() } }, { returnDocument: 'after' })
}

export async function deleteWebhook(db: Db, projectId: string, id: string): Promise<boolean> {
  const r = await webhooks(db).deleteOne({ _id: id, project_id: projectId })
  if (r.deletedCount !== 1) return false
  await releaseSlot(db, projectId)
  return true
}

/** An environment renamed: its webhooks follow it (each names the environment whose changes it gets). */
export async function renameWebhooksEnvironment(db: Db, projectId: string, from: string, to: string): Promise<void> {
  await webhooks(db).updateMany({ project_id: projectId, environment: from }, { $set: { environment: to, updated_at: clock.now() } })
}

/** An environment deleted: its webhooks go with it (they would otherwise name an environment that is no more). */
export async function deleteWebhooksOfEnvironment(db: Db, projectId: string, environment: string): Promise<void> {
  for (const h of await webhooks(db).find({ project_id: projectId, environment }, { projection: { _id: 1 } }).toArray()) await deleteWebhook(db, projectId, h._id)
}

/** The webhooks a change goes to: enabled, listening for its type, and of its environment unless it is shared. */
export async function webhooksFor(db: Db, projectId: string, type: string, environment: string | null): Promise<WebhookDoc[]> {
  const all = await webhooks(db).find({ project_id: projectId, enabled: true }).toArray()
  return all.filter((h) => (h.events === null || (h.events as string[]).includes(type)) && (environment === null || h.environment === environment))
}
