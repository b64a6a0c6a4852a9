// The project's audit trail (GET /api/v1/projects/{id}/history): every recorded change — flags,
// segments, environments, SDK and server keys, webhooks, the project itself — newest first, with
// who and when and the readable diff of a flag's history (history-entry.tsx). Filters are the
// API's own (kind, type), kept in the address so a filtered view can be linked; "Older changes"
// pages with the answer's `next_before`. Changes heard on the stream are put on top.
import { useEffect, useState } from 'preact/hooks'
import { api, seg } from '../ui/api.ts'
import { SelectField } from '../ui/fields.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { currentQuery, navigate } from '../ui/router.ts'
import { Diff, WhoWhen } from './history-entry.tsx'
import { base, lastChange, resynced } from './project-data.ts'
import type { HistoryEntry } from './types.ts'

/** The kinds and types the API's filters take (history-routes.ts); the test checks it accepts each. */
const KINDS: Array<[string, string]> = [
  ['flag', 'Flags'],
  ['segment', 'Segments'],
  ['environment', 'Environments'],
  ['sdk_key', 'SDK and server keys'],
  ['webhook', 'Webhooks'],
  ['project', 'The project'],
]
const typesOf = (kind: string) => (kind === 'sdk_key' ? ['rotated', 'revoked'] : ['created', 'updated', 'deleted']).map((t) => `${kind}.${t}`)
const PAGE = 50

type Answer = { history: HistoryEntry[]; next_before: string | null }

/** The entry's title: what changed, linked to where it is managed now. */
function What({ id, e }: { id: string; e: HistoryEntry }) {
  const root = `/projects/${seg(id)}`
  const did = (e.type ?? '').split('.')[1] ?? 'changed'
  const state = (e.after ?? e.before ?? {}) as Record<string, any>
  switch (e.kind) {
    case 'flag':
      return (
        <>
          Flag <a href={`${root}/flags/${seg(e.target)}`}>{e.target}</a> {did}
          {e.environment ? ` in ${e.environment}` : ''}
        </>
      )
    case 'segment':
      return (
        <>
          Segment <a href={`${root}/segments`}>{e.target}</a> {did}
        </>
      )
    case 'environment':
      return (
        <>
          Environment <a href={`${root}/environments`}>{e.target}</a> {did}
        </>
      )
    case 'sdk_key':
      return (
        <>
          Keys of <a href={`${root}/environments`}>{e.target}</a> {did}
        </>
      )
    case 'webhook':
      return (
        <>
          Webhook <a href={`${root}/webhooks`}>{typeof state.url === 'string' ? state.url : e.target}</a> {did}
        </>
      )
    default:
      return (
        <>
          Project {typeof state.name === 'string' ? state.name : ''} {did}
        </>
      )
  }
}

export function ProjectHistory({ id }: { id: string }) {
  const q = new URLSearchParams(currentQuery.value)
  const kind = q.get('kind') ?? ''
  const type = q.get('type') ?? ''
  const [entries, setEntries] = useState<HistoryEntry[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const page = async (before?: string): Promise<Answer> => {
    const p = new URLSearchParams({ limit: String(PAGE) })
    if (kind) p.set('kind', kind)
    if (type) p.set('type', type)
    if (before) p.set('before', before)
    return (await api<Answer>('GET', `${base(id)}/history?${p}`)).data
  }
  const load = async (before?: string) => {
    setBusy(true)
    try {
      const r = await page(before)
      setEntries((prev) => (before ? [...(prev ?? []), ...r.history] : r.history))
      setNext(r.next_before)
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    } finally {
      setBusy(false)
    }
  }
  /** Newer entries than those shown go on top; what is further down (older pages) stays. */
  const refreshTop = async () => {
    try {
      const r = await page()
      setEntries((prev) => {
        const top = prev?.[0]?.id
        if (!prev || !top) return r.history
        return [...r.history.filter((e) => e.id > top), ...prev]
      })
    } catch {
      /* the next change or reconnect reads again */
    }
  }
  useEffect(() => {
    setEntries(null)
    void load()
  }, [id, kind, type, resynced.value])
  useEffect(() => {
    if (lastChange.value) void refreshTop()
  }, [lastChange.value])

  const filter = (k: string, t: string) => {
    const p = new URLSearchParams()
    if (k) p.set('kind', k)
    if (t) p.set('type', t)
    const s = p.toString()
    navigate(`/projects/${seg(id)}/history${s ? `?${s}` : ''}`, true)
  }
  const typeOptions = (kind ? typesOf(kind) : KINDS.flatMap(([k]) => typesOf(k))).map((t) => ({ value: t, label: t }))
  return (
    <Page title="Project history">
      <p class="hint">Every change recorded in this project, newest first: flags, segments, environments, keys, webhooks and the project itself.</p>
      <div class="filters" role="group" aria-label="Filter the history">
        <SelectField id="history-kind" label="What changed" value={kind} options={[{ value: '', label: 'Everything' }, ...KINDS.map(([value, label]) => ({ value, label }))]} onValue={(k) => filter(k, type && type.startsWith(`${k}.`) ? type : '')} />
        <SelectField id="history-type" label="Change" value={type} options={[{ value: '', label: 'Any change' }, ...typeOptions]} onValue={(t) => filter(kind, t)} />
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      {entries && entries.length === 0 && <Notice>{kind || type ? 'No changes match these filters.' : 'No changes recorded.'}</Notice>}
      {!entries && !error && <p>Loading…</p>}
      {entries && entries.length > 0 && (
        <ol class="history" aria-label="Changes, newest first">
          {entries.map((e) => (
            <li key={e.id} class="card" data-entry={e.id}>
              <div class="rule-head">
                <h2 class="h3">
                  <What id={id} e={e} />
                </h2>
                {e.kind === 'flag' && (
                  <a href={`/projects/${seg(id)}/flags/${seg(e.target)}/history`}>History of {e.target}</a>
                )}
              </div>
              <WhoWhen entry={e} />
              <Diff entry={e} />
            </li>
          ))}
        </ol>
      )}
      {next && (
        <button type="button" id="history-more" disabled={busy} onClick={() => load(next)}>
          Older changes
        </button>
      )}
    </Page>
  )
}
