// The OpenFeature server provider that evaluates in process: the flag set is synced from the
// service (flag-set-sync.ts) and evaluated by the service's own rule engine
// (src/flags/engine), so every answer — value, reason, variant, metadata, error — is the one the
// OFREP endpoint gives for the same flag and context. Nothing goes over the network per call.
import {
  FlagNotFoundError,
  GeneralError,
  InvalidContextError,
  OpenFeatureEventEmitter,
  ProviderEvents,
  ProviderFatalError,
  ProviderNotReadyError,
  TypeMismatchError,
  type EvaluationContext,
  type JsonValue,
  type Provider,
  type ResolutionDetails,
} from '@openfeature/server-sdk'
import { ofrepResult, tooManyAttributes, TOO_MANY_ATTRIBUTES } from '../../../src/flags/engine/ofrep-result.ts'
import type { CompiledFlagSet } from '../../../src/flags/engine/flag-set.ts'
import { EMPTY_CONTEXT, inPlaceContext, type CompiledFlag, type Evaluation } from '../../../src/flags/engine/rules.ts'
import { FlagSetSync, KeyRefusedError, type SyncOptions, type SyncStatus } from './flag-set-sync.ts'
import { UsageReporter, type ServedEntry, type UsageOptions } from './usage-reporter.ts'

export interface QueueworksProviderOptions extends SyncOptions {
  /** Per-flag evaluation counts sent to the service (usage-reporter.ts); false: none sent. */
  usage?: UsageOptions | false
}

export class QueueworksProvider implements Provider {
  readonly metadata = { name: 'queueworks-in-process' } as const
  readonly runsOn = 'server' as const
  readonly events = new OpenFeatureEventEmitter()
  private readonly sync: FlagSetSync
  private readonly usage: UsageReporter | null
  /** The flags of the set in use, each with the details and usage counts of its results served so far. */
  private served: ServedSet = { compiled: null, byKey: Object.create(null) }

  constructor(opts: QueueworksProviderOptions) {
    this.sync = new FlagSetSync(opts, {
      changed: (flagsChanged) => {
        this.serve(this.sync.copy!.compiled)
        // The first copy is reported by initialize; later ones are configuration changes.
        if (this.initialized) this.events.emit(ProviderEvents.ConfigurationChanged, { flagsChanged })
        if (this.initFailed) {
          this.initFailed = false
          this.events.emit(ProviderEvents.Ready)
        }
      },
      reachability: (reachable, error) => {
        if (!this.initialized || !this.sync.copy) return
        if (reachable) this.events.emit(ProviderEvents.Ready)
        else this.events.emit(ProviderEvents.Stale, { message: error ?? 'flag service unreachable' })
      },
    })
    this.usage = opts.usage === false ? null : new UsageReporter(opts, opts.usage ?? {}, () => servedEntries(this.served))
  }

  /** The records of `compiled`, the set now in use; the counts of the one it replaces go to the next batch. */
  private serve(compiled: CompiledFlagSet): ServedSet {
    if (this.served.compiled === compiled) return this.served
    this.usage?.drain()
    const byKey: Record<string, ServedFlag | undefined> = Object.create(null)
    for (const flag of compiled.all) byKey[flag.key] = { flag, typed: flag.definition.type !== undefined, results: [], entries: [], more: null }
    return (this.served = { compiled, byKey })
  }

  private initialized = false
  private initFailed = false

  async initialize(): Promise<void> {
    try {
      await this.sync.start()
    } catch (err) {
      if (err instanceof KeyRefusedError) throw new ProviderFatalError(err.message)
      this.initFailed = true
      throw new GeneralError(`no flag set yet (the provider keeps trying): ${(err as Error).message}`)
    } finally {
      this.initialized = true
    }
    this.usage?.start()
    // Started from the saved copy: say at once that it may be stale.
    if (this.sync.copy?.source === 'file') setImmediate(() => this.events.emit(ProviderEvents.Stale, { message: 'serving the saved flag set; the service is unreachable' }))
  }

  async onClose(): Promise<void> {
    this.sync.close()
    await this.usage?.close()
  }

  /** Where the flag set in use came from and how stale it is. */
  syncStatus(): SyncStatus {
    return this.sync.status()
  }

  /** The tag of the flag set in use (its ETag), or null before one is loaded. */
  get etag(): string | null {
    return this.sync.copy?.set.etag ?? null
  }

  resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): Promise<ResolutionDetails<boolean>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context))
  }
  resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<ResolutionDetails<string>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context))
  }
  resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<ResolutionDetails<number>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context))
  }
  resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Promise<ResolutionDetails<T>> {
    return Promise.resolve(this.resolve(flagKey, defaultValue, context))
  }

  /**
   * One evaluation, synchronously (the OpenFeature methods wrap it in a promise as the interface
   * asks). Errors are thrown as OpenFeature errors, which the SDK turns into the caller's default
   * with reason ERROR and the error code — as the OFREP provider does with the service's answers.
   */
  resolve<T>(flagKey: string, defaultValue: T, context: EvaluationContext): ResolutionDetails<T> {
    const copy = this.sync.copy
    if (!copy) throw new ProviderNotReadyError('no flag set loaded yet')
    // One lookup gives the compiled flag and its served results (the set's own map would be a
    // second): a property of a prototype-less object, which V8 finds faster than Map.get.
    const served = this.served.compiled === copy.compiled ? this.served : this.serve(copy.compiled)
    const s = typeof flagKey === 'string' ? served.byKey[flagKey] : undefined
    if (s === undefined) throw new FlagNotFoundError(`Flag "${flagKey}" not found`)
    if (context != null && tooManyAttributes(context)) throw new InvalidContextError(TOO_MANY_ATTRIBUTES)
    // Read in place, not copied: the copy of each call's context was half of an evaluation's cost.
    const r = s.flag.evaluate(context == null ? EMPTY_CONTEXT : inPlaceContext(context))
    // Each engine result is a frozen object of one flag and variant: its details are built once,
    // and its usage is counted on the same entry (no allocation per evaluation). A flag serves a
    // few results, found by identity in a short array (a Map keyed by result cost a hash lookup
    // per evaluation, about a tenth of the mixed workload's).
    const e = servedEntry(s, r)
    if (typeof e.details.value !== typeof defaultValue) throw new TypeMismatchError(`Expected flag type ${typeof defaultValue} but got ${typeof e.details.value}`)
    e.n++
    return e.details as ResolutionDetails<T>
  }
}

/** A flag of the set in use and the entries of the results it has served (results[i] → entries[i]). */
interface ServedFlag {
  flag: CompiledFlag
  typed: boolean
  results: Evaluation[]
  entries: ServedEntry[]
  /** Past SHORT_LIST results (flags of many rules or variants): the rest by result. */
  more: Map<Evaluation, ServedEntry> | null
}

interface ServedSet {
  compiled: CompiledFlagSet | null
  /** By flag key, without a prototype (a key such as "constructor" or "__proto__" is just a key). */
  byKey: Record<string, ServedFlag | undefined>
}

const SHORT_LIST = 8

function servedEntry(s: ServedFlag, r: Evaluation): ServedEntry {
  const results = s.results
  for (let i = 0; i < results.length; i++) if (results[i] === r) return s.entries[i]!
  let e = s.more?.get(r)
  if (e !== undefined) return e
  const o = ofrepResult(s.flag.key, r, s.typed)
  e = { details: Object.freeze({ value: o.value, variant: o.variant, reason: o.reason, flagMetadata: Object.freeze(o.metadata) }), flag: s.flag.key, variant: o.variant, n: 0 }
  if (results.length < SHORT_LIST) {
    results.push(r)
    s.entries.push(e)
  } else (s.more ??= new Map()).set(r, e)
  return e
}

function* servedEntries(set: ServedSet): Iterable<ServedEntry> {
  for (const s of Object.values(set.byKey)) {
    yield* s!.entries
    if (s!.more) yield* s!.more.values()
  }
}
