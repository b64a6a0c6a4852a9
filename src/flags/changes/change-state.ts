// What audit history and flag-change webhooks show as a resource's state: plain JSON without
// timestamps or secrets, so two states compare equal exactly when nothing a user set differs.
// A flag's state lists every environment of its project (its definition is shared, its enabled
// state, rules, default and split are per environment), so a diff path says which environment
// changed (`/environments/staging/enabled`).
import { isDeepStrictEqual } from 'node:util'
import type { Db } from 'mongodb'
import { getFlag, stateIn, type FlagDoc } from '../store/flag-store.ts'
import { environmentNames, PRODUCTION, serverKeyHint, type ProjectDoc } from '../store/project-store.ts'
import { getSegment, type SegmentDoc } from '../store/segment-store.ts'
import { getWebhook, type WebhookDoc } from './change-hook-store.ts'
import { variantView } from '../engine/variant-allocation.ts'

/** Kinds of resources whose changes are recorded. */
export const CHANGE_KINDS = ['flag', 'segment', 'project', 'environment', 'sdk_key', 'webhook'] as const
export type ChangeKind = (typeof CHANGE_KINDS)[number]

/** Changes of these kinds are sent to the project's webhooks. */
export const EVENT_KINDS: ChangeKind[] = ['flag', 'segment']

/** JSON as it would be sent: undefined fields dropped, dates as strings. */
const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v))

export function flagState(p: ProjectDoc, f: FlagDoc | null) {
  if (!f) return null
  const environments: Record<string, unknown> = {}
  for (const name of environmentNames(p)) {
    const st = stateIn(f, name)
    // Variants without their buckets, as the API shows them (variant-allocation.ts keeps them internal).
    const rules = st.rules.map((r) => (r.variants ? { ...r, variants: r.variants.map(variantView) } : r))
    const fallthrough = st.fallthrough ? { fallthrough: { ...st.fallthrough, variants: st.fallthrough.variants.map(variantView) } } : {}
    environments[name] = { enabled: st.enabled, default_value: st.default_value, rules, ...fallthrough }
  }
  // Tags only once a flag has some, so entries written before tags existed read the same.
  return plain({ key: f.key, name: f.name, ...(f.type !== undefined ? { type: f.type } : {}), ...(f.tags?.length ? { tags: f.tags } : {}), environments })
}

export const segmentState = (s: SegmentDoc | null) => (s ? plain({ name: s.name, description: s.description, conditions: s.conditions }) : null)

export const projectState = (p: ProjectDoc) => plain({ name: p.name, allowed_origins: p.allowed_origins ?? ['*'] })

export function environmentState(p: ProjectDoc, name: string) {
  if (name === PRODUCTION) return { name, sdk_key_hint: p.sdk_key_hint }
  const e = p.environments?.find((x) => x.name === name)
  return e ? { name, sdk_key_hint: e.sdk_key_hint } : null
}

/** An SDK key is shown by its hint only; a rotation changes the hint. */
export function sdkKeyState(p: ProjectDoc, environment: string) {
  const e = environmentState(p, environment)
  if (!e) return null
  // The server key's hint only once there is one, so entries from before server keys read the same.
  const server = serverKeyHint(p, environment)
  return { environment, sdk_key_hint: e.sdk_key_hint, ...(server ? { server_key_hint: server } : {}) }
}

/** A webhook's secret is shown by its hint only, as SDK keys are: a rotation changes the hint (`/secret_hint` in the diff). */
export const webhookState = (h: WebhookDoc | null) =>
  h ? plain({ id: h._id, url: h.url, environment: h.environment, events: h.events, description: h.description, enabled: h.enabled, secret_hint: h.secret_hint }) : null

/** The current state of a resource, read from the store (null: it does not exist). */
export async function readState(db: Db, p: ProjectDoc, kind: ChangeKind, target: string): Promise<unknown> {
  switch (kind) {
    case 'flag':
      return flagState(p, await getFlag(db, p._id, target))
    case 'segment':
      return segmentState(await getSegment(db, p._id, target))
    case 'project':
      return projectState(p)
    case 'environment':
      return environmentState(p, target)
    case 'sdk_key':
      return sdkKeyState(p, target)
    case 'webhook':
      return webhookState(await getWebhook(db, p._id, target))
  }
}

export const sameState = (a: unknown, b: unknown) => isDeepStrictEqual(a, b)

/**
 * The one environment whose state alone a flag change touched (every changed path is under
 * `/environments/<name>/`), or null when the change is shared by all (definition, creation, deletion).
 */
export function environmentOfChange(kind: ChangeKind, type: string, paths: string[]): string | null {
  if (kind !== 'flag' || !type.endsWith('.updated') || paths.length === 0) return null
  const names = new Set(paths.map((p) => /^\/environments\/([^/]+)(\/|$)/.exec(p)?.[1] ?? ''))
  const [only] = names
  return names.size === 1 && only ? only : null
}
