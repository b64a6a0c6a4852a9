// How an audit history entry reads, shared by a flag's history (history.tsx) and the project's
// (project-history.tsx): who and when, and the change as readable lines ("production › rules ›
// #1 › value: a → b") taken from the entry's JSON Patch and its before state.
import { showValue, Time } from '../ui/format.tsx'
import { account } from './session.ts'
import type { HistoryEntry } from './types.ts'

function at(doc: any, pointer: string): unknown {
  let v = doc
  for (const raw of pointer.split('/').slice(1)) {
    if (v === null || v === undefined) return undefined
    v = v[raw.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  return v
}

// A flag's state keeps its per-environment parts under /environments/<name>: the name says enough.
const readable = (path: string, whole: string) =>
  path
    .split('/')
    .slice(1)
    .filter((p) => p !== 'environments')
    .map((p) => (/^\d+$/.test(p) ? `#${Number(p) + 1}` : p.replace(/~1/g, '/')))
    .join(' › ') || whole

const short = (v: unknown) => {
  if (v === '') return '(empty)'
  const s = showValue(v)
  return s.length > 160 ? `${s.slice(0, 157)}…` : s
}

export function Diff({ entry }: { entry: HistoryEntry }) {
  if (entry.before === null) return <p class="diff">Created.</p>
  if (entry.after === null) return <p class="diff">Deleted.</p>
  return (
    <ul class="diff">
      {entry.changes.map((c, i) => (
        <li key={i}>
          <span class="mono">{readable(c.path.replace(/\/-$/, ''), `the ${entry.kind.replace('_', ' ')}`)}</span>:{' '}
          {/* An add at the end of a list (path …/-): what was appended. */}
          {c.op === 'add' && c.path.endsWith('/-') ? (
            <>
              <ins>{short(c.value)}</ins> added
            </>
          ) : c.op === 'add' ? (
            <ins>{short(c.value)}</ins>
          ) : c.op === 'remove' ? (
            <>
              <del>{short(at(entry.before, c.path))}</del> removed
            </>
          ) : (
            <>
              <del>{short(at(entry.before, c.path))}</del> → <ins>{short(c.value)}</ins>
            </>
          )}
        </li>
      ))}
    </ul>
  )
}

/** The API key's hint (the history keeps no more of a key), with the account's e-mail when it is the signed-in one. */
export function who(actor: HistoryEntry['actor']): string {
  const key = actor.email ?? actor.api_key?.hint ?? actor.account_id
  const me = account.value
  return me && me.id === actor.account_id && !actor.email ? `${key} (${me.email})` : key
}

/** "3 min ago by fb_…x1y2 (ann@example.com)": the exact time in the element's title. */
export function WhoWhen({ entry }: { entry: HistoryEntry }) {
  return (
    <p class="muted">
      <Time iso={entry.at} /> by {who(entry.actor)}
    </p>
  )
}
