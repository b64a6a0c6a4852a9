// A flag set: every flag definition of one project environment and the segments its rules name,
// compiled together. The service's evaluation cache and the in-process OpenFeature provider
// (packages/openfeature-provider) both compile through here, so the same rules give the same
// answers in either place. The serialised form is the flag-set endpoint's answer (docs/flags.md,
// "Flag set").
import type { Condition } from './operators.ts'
import { compileFlag, type CompiledFlag, type FlagDefinition } from './rules.ts'

/** The flag-set format this code writes and reads; a reader refuses any other. */
export const FLAG_SET_FORMAT_VERSION = 1

export interface FlagSetSegment {
  name: string
  conditions: Condition[]
}

/** The flag-set endpoint's answer (docs/schemas/flag-set.v1.json). */
export interface FlagSetV1 {
  format_version: typeof FLAG_SET_FORMAT_VERSION
  project: string
  environment: string
  /** The flag set's tag: the ETag of this answer and the id of the change stream's events. */
  etag: string
  /** Sorted by key. */
  flags: FlagDefinition[]
  segments: FlagSetSegment[]
}

export interface CompiledFlagSet {
  byKey: Map<string, CompiledFlag>
  /** In the order given (sorted by key: bulk evaluation order). */
  all: CompiledFlag[]
}

export function compileFlagSet(flags: readonly FlagDefinition[], segments: readonly FlagSetSegment[]): CompiledFlagSet {
  const byName = new Map(segments.map((s) => [s.name, s.conditions]))
  const all = flags.map((d) => compileFlag(d, byName))
  return { byKey: new Map(all.map((f) => [f.key, f])), all }
}
