// Partitioned collections: one logical collection of growing data (captures, invoices, PDFs)
// spread over a fixed number of physical collections ("slots"), so that no single collection
// grows without bound. The embedded engine copies a whole collection on every write to it
// (docs/embedded-store.md has the measurements): spreading 100,000 captures over 1,000 slots keeps
// each write at the cost of about a hundred documents. On a real MongoDB a layout of one slot is
// the plain collection under its own name, so existing deployments see no change.
//
// A document's slot is a pure function of its key (and, for keys that grow in sequence, of the
// key's block), so a read by key touches one collection and no locator document is needed. The
// slot count of each partitioned collection is fixed the first time a database is used and kept
// in that database (`qw_layout`), so every process (API, workers, a later start from a snapshot)
// agrees on it whatever its configuration says.
import murmurhash from 'murmurhash'
import { eachLimit } from './each-limit.ts'
import type { Collection, Db, Document, Filter } from 'mongodb'

export const LAYOUT_COLLECTION = 'qw_layout'

/** Slots asked at once by the operations that visit every slot (most slots of a small store are empty: ~0.4 ms each). */
const SLOT_PARALLEL = 8

export interface LayoutDoc {
  _id: string
  slots: number
}

export class Partitioned<T extends Document> {
  constructor(
    readonly db: Db,
    readonly base: string,
    readonly slots: number,
  ) {}

  /** Physical name of slot i: the base name itself when there is only one. */
  name(i: number): string {
    return this.slots === 1 ? this.base : `${this.base}_p${String(i).padStart(3, '0')}`
  }

  names(): string[] {
    return Array.from({ length: this.slots }, (_, i) => this.name(i))
  }

  at(i: number): Collection<T> {
    return this.db.collection<T>(this.name(i))
  }

  all(): Array<Collection<T>> {
    return Array.from({ length: this.slots }, (_, i) => this.at(i))
  }

  /**
   * The slot of `key`, moved on by `block`: consecutive blocks of one key (an endpoint's request
   * ids 0–127, 128–255, …) land in consecutive slots, so one busy key fills every slot evenly
   * instead of piling up in one.
   */
  slotOf(key: string, block = 0): number {
    if (this.slots === 1) return 0
    return (murmurhash.v3(key) + block) % this.slots
  }

  of(key: string, block = 0): Collection<T> {
    return this.at(this.slotOf(key, block))
  }

  /** Run `fn` on every slot (or only those listed), a few at a time. */
  eachSlot(fn: (c: Collection<T>, i: number) => Promise<void>, only?: number[]): Promise<void> {
    return eachLimit(
      (only ?? this.all().map((_, i) => i)).map((i) => [this.at(i), i] as const),
      SLOT_PARALLEL,
      ([c, i]) => fn(c, i),
    )
  }

  /** deleteMany on every slot; the number deleted in all. */
  async deleteMany(filter: Filter<T>): Promise<number> {
    let n = 0
    await this.eachSlot(async (c) => {
      const { deletedCount } = await c.deleteMany(filter) // awaited before adding: slots run at once
      n += deletedCount
    })
    return n
  }

  /** Every matching document of every slot (for sweeps and tests: slot order, no order across slots). */
  async findAll(filter: Filter<T> = {}): Promise<T[]> {
    const bySlot: T[][] = []
    await this.eachSlot(async (c, i) => void (bySlot[i] = (await c.find(filter).toArray()) as T[]))
    return bySlot.flat()
  }

  /**
   * The first `limit` matching documents of all slots together, in `sort` order of one unique
   * field: for logical collections whose documents are spread by their own id, where a listing
   * has to ask every slot. Each slot is asked for a small share first and again (from where it
   * stopped) only while its next documents could still be among the first `limit`, so a page reads
   * about `limit` documents, not `limit` per slot.
   */
  async findSorted(filter: Filter<T>, field: keyof T & string, direction: 1 | -1, limit: number): Promise<T[]> {
    const share = Math.max(4, Math.ceil((2 * limit) / this.slots))
    const before = (a: unknown, b: unknown) => (direction === -1 ? (a as any) > (b as any) : (a as any) < (b as any))
    const fetched: T[][] = this.all().map(() => [])
    const open = new Set(this.all().map((_, i) => i))
    const page = (i: number) => {
      const last = fetched[i]!.at(-1)
      const range = last === undefined ? {} : { [field]: { [direction === -1 ? '$lt' : '$gt']: last[field] } }
      const f = (last === undefined ? filter : { $and: [filter, range] }) as Filter<T>
      return this.at(i).find(f).sort({ [field]: direction } as never).limit(share).toArray() as Promise<T[]>
    }
    let ask = [...open]
    for (;;) {
      const got = await Promise.all(ask.map(page))
      ask.forEach((i, j) => {
        fetched[i]!.push(...got[j]!)
        if (got[j]!.length < share) open.delete(i)
      })
      const merged = fetched.flat().sort((a, b) => (before(a[field], b[field]) ? -1 : before(b[field], a[field]) ? 1 : 0))
      const edge = merged.length >= limit ? merged[limit - 1]![field] : undefined
      // A slot may hold more of the page while its last fetched document still sorts before the page's last one.
      ask = [...open].filter((i) => edge === undefined || before(fetched[i]!.at(-1)![field], edge))
      if (ask.length === 0) return merged.slice(0, limit)
    }
  }

  /**
   * findSorted for an order of two fields, newest first — a field that may repeat (a time) and a
   * unique one that breaks its ties (an id) — through an aggregate whose `$project` shapes each
   * document: the embedded engine ignores find projections, and a listing must not read documents
   * that carry their PDFs. The page after `after` (the last document of the previous page) starts
   * strictly below it, so a page boundary never repeats or skips a document.
   */
  async pageNewestFirst<R extends Document>(
    filter: Filter<T>,
    order: { time: keyof T & string; tie: keyof T & string },
    limit: number,
    project: Document,
    after?: { time: unknown; tie: unknown },
  ): Promise<R[]> {
    const { time, tie } = order
    const share = Math.max(4, Math.ceil((2 * limit) / this.slots))
    const key = (d: Document) => [d[time], d[tie]] as const
    const older = (a: readonly [unknown, unknown], b: readonly [unknown, unknown]) => (a[0] as any) < (b[0] as any) || (+(a[0] as any) === +(b[0] as any) && (a[1] as any) < (b[1] as any))
    const below = (k: readonly [unknown, unknown]) => ({ $or: [{ [time]: { $lt: k[0] } }, { [time]: k[0], [tie]: { $lt: k[1] } }] })
    const fetched: Document[][] = this.all().map(() => [])
    const open = new Set(this.all().map((_, i) => i))
    const start = after ? [after.time, after.tie] as const : undefined
    const page = (i: number) => {
      const last = fetched[i]!.at(-1)
      const from = last ? key(last) : start
      const match = from ? { $and: [filter, below(from)] } : filter
      return this.at(i)
        .aggregate([{ $match: match }, { $sort: { [time]: -1, [tie]: -1 } }, { $limit: share }, { $project: { ...project, [time]: 1, [tie]: 1 } }])
        .toArray()
    }
    let ask = [...open]
    for (;;) {
      const got = await Promise.all(ask.map(page))
      ask.forEach((i, j) => {
        fetched[i]!.push(...got[j]!)
        if (got[j]!.length < share) open.delete(i)
      })
      const merged = fetched.flat().sort((a, b) => (older(key(b), key(a)) ? -1 : older(key(a), key(b)) ? 1 : 0))
      const edge = merged.length >= limit ? key(merged[limit - 1]!) : undefined
      // A slot may hold more of the page while its last fetched document is still newer than the page's last one.
      ask = [...open].filter((i) => edge === undefined || older(edge, key(fetched[i]!.at(-1)!)))
      if (ask.length === 0) return merged.slice(0, limit) as R[]
    }
  }

  async countDocuments(filter: Filter<T> = {}): Promise<number> {
    let n = 0
    await this.eachSlot(async (c) => {
      const count = await c.countDocuments(filter)
      n += count
    })
    return n
  }
}

/** Slot counts per database, loaded once by loadLayouts() when the platform connects. */
const layouts = new WeakMap<Db, Map<string, number>>()

export function partitioned<T extends Document>(db: Db, base: string): Partitioned<T> {
  const slots = layouts.get(db)?.get(base)
  if (slots === undefined) throw new Error(`the layout of ${base} was not loaded for database ${db.databaseName} (loadLayouts runs in createPlatform)`)
  return new Partitioned<T>(db, base, slots)
}

/**
 * Fix (first use) or read (later uses) the slot count of each partitioned collection of `db`.
 * `wanted` is used only when the database has no layout for that collection yet (and does not
 * already hold it as a plain collection); the first process to ask wins, and everyone gets the
 * stored answer.
 */
export async function loadLayouts(db: Db, wanted: Record<string, number>): Promise<Map<string, number>> {
  const map = layouts.get(db) ?? new Map<string, number>()
  for (const [base, slots] of Object.entries(wanted)) {
    if (!(Number.isInteger(slots) && slots >= 1 && slots <= 1000)) throw new Error(`bad slot count for ${base}: ${slots}`)
    const layout = db.collection<LayoutDoc>(LAYOUT_COLLECTION)
    let doc = await layout.findOne({ _id: base })
    if (!doc) {
      // A database that already holds the plain collection (made before it was partitioned, e.g.
      // a data folder of an earlier version) keeps it as its one slot: nothing stored is hidden.
      const held = (await db.collection(base).findOne({}, { projection: { _id: 1 } })) !== null
      doc = await layout.findOneAndUpdate({ _id: base }, { $setOnInsert: { slots: held ? 1 : slots } }, { upsert: true, returnDocument: 'after' })
    }
    map.set(base, doc?.slots ?? slots)
  }
  layouts.set(db, map)
  return map
}

/** The stored layout of `base` for a connection that did not load layouts (scripts); one slot when none is stored. */
export async function readLayout<T extends Document>(db: Db, base: string): Promise<Partitioned<T>> {
  const doc = await db.collection<LayoutDoc>(LAYOUT_COLLECTION).findOne({ _id: base })
  return new Partitioned<T>(db, base, doc?.slots ?? 1)
}

/** Every physical collection name of a loaded layout (used by snapshots and index creation). */
export function physicalNames(db: Db, base: string): string[] {
  const slots = layouts.get(db)?.get(base)
  return slots === undefined ? [base] : new Partitioned(db, base, slots).names()
}

/** Whether the server is the embedded engine (jongodb reports itself in buildInfo). */
export async function isEmbeddedEngine(db: Db): Promise<boolean> {
  const info = await db.admin().command({ buildInfo: 1 })
  return String(info.gitVersion ?? '').includes('jongodb') || String(info.version ?? '').includes('jongodb')
}
