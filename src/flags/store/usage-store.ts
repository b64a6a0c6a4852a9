// Per-flag usage in MongoDB: one document per project, environment, flag and hour, holding the
// evaluations counted per variant, split by where they ran — `service` (OFREP, /evaluate) and
// `in_process` (what in-process providers reported). Counts are added with $inc, so batches from
// many replicas and providers add up. Variant names may hold "." (a path separator in MongoDB
// field names): it is stored as "%2E". Documents older than USAGE_RETENTION_DAYS expire.
// Beside them, `flag_last_evaluated` keeps per project, environment and flag the time counts last
// arrived (one small document each), so the flag list can say when a flag was last evaluated
// without reading its hours.
import type { Db } from 'mongodb'
import type { IndexSpec } from '../../platform/store/mongo.ts'
import { logger } from '../../platform/logger.ts'

export type UsageSource = 'service' | 'in_process'

export interface UsageDoc {
  _id: string
  project_id: string
  environment: string
  flag: string
  /** The hour (UTC) the counts arrived in. */
  period_start: Date
  service?: Record<string, number>
  in_process?: Record<string, number>
}

export const HOUR_MS = 3_600_000
export const USAGE_RETENTION_DAYS = 90

export const usageIndexes: IndexSpec[] = [
  {
    collection: 'flag_usage',
    indexes: [
      { key: { project_id: 1, environment: 1, flag: 1, period_start: 1 }, name: 'flag_period' },
      { key: { period_start: 1 }, name: 'usage_expiry', expireAfterSeconds: USAGE_RETENTION_DAYS * 86_400 },
    ],
  },
  {
    collection: 'flag_last_evaluated',
    indexes: [
      { key: { project_id: 1, environment: 1 }, name: 'project_environment' },
      { key: { at: 1 }, name: 'last_evaluated_expiry', expireAfterSeconds: USAGE_RETENTION_DAYS * 86_400 },
    ],
  },
]

export interface LastEvaluatedDoc {
  /** `<project>/<environment>/<flag>` */
  _id: string
  project_id: string
  environment: string
  flag: string
  at: Date
}

const lastEvaluated = (db: Db) => db.collection<LastEvaluatedDoc>('flag_last_evaluated')

/** When each flag of the project was last counted in `environment` (flags never counted are absent). */
export async function lastEvaluatedIn(db: Db, project: string, environment: string): Promise<Map<string, Date>> {
  const docs = await lastEvaluated(db).find({ project_id: project, environment }).toArray()
  return new Map(docs.map((d) => [d.flag, d.at]))
}

const usage = (db: Db) => db.collection<UsageDoc>('flag_usage')

export const encodeVariant = (v: string) => v.replace(/%/g, '%25').replace(/\./g, '%2E')
export const decodeVariant = (v: string) => v.replace(/%2E/g, '.').replace(/%25/g, '%')

export interface UsageRow {
  project: string
  environment: string
  flag: string
  variant: string
  source: UsageSource
  n: number
}

/** Adds counts to the hour of `at`; one upsert per (flag, hour) document. */
export async function addUsage(db: Db, rows: readonly UsageRow[], at: Date): Promise<void> {
  if (rows.length === 0) return
  const start = new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS)
  const docs = new Map<string, { row: UsageRow; inc: Record<string, number> }>()
  for (const r of rows) {
    if (r.n <= 0) continue
    const id = `${r.project}/${r.environment}/${r.flag}/${start.toISOString()}`
    let d = docs.get(id)
    if (!d) docs.set(id, (d = { row: r, inc: {} }))
    const field = `${r.source}.${encodeVariant(r.variant)}`
    d.inc[field] = (d.inc[field] ?? 0) + r.n
  }
  if (docs.size === 0) return
  await usage(db).bulkWrite(
    [...docs].map(([id, { row, inc }]) => ({
      updateOne: {
        filter: { _id: id },
        update: { $inc: inc, $setOnInsert: { project_id: row.project, environment: row.environment, flag: row.flag, period_start: start } },
        upsert: true,
      },
    })),
    { ordered: false },
  )
  // Best effort, after the counts: a failure here must not make the caller count them again.
  const flagsSeen = new Map<string, UsageRow>()
  for (const { row } of docs.values()) flagsSeen.set(`${row.project}/${row.environment}/${row.flag}`, row)
  await lastEvaluated(db)
    .bulkWrite(
      [...flagsSeen].map(([id, row]) => ({
        updateOne: {
          filter: { _id: id },
          update: { $set: { at }, $setOnInsert: { project_id: row.project, environment: row.environment, flag: row.flag } },
          upsert: true,
        },
      })),
      { ordered: false },
    )
    .catch((err) => logger.warn({ err: String(err) }, 'last evaluated times not stored'))
}

/** A flag's hourly documents in [from, to), oldest first. */
export async function readUsage(db: Db, project: string, environment: string, flag: string, from: Date, to: Date): Promise<UsageDoc[]> {
  return usage(db)
    .find({ project_id: project, environment, flag, period_start: { $gte: from, $lt: to } })
    .sort({ period_start: 1 })
    .toArray()
}
