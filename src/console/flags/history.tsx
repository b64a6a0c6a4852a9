// A flag's audit trail: who changed what and when, each change as readable lines (history-entry.tsx,
// shared with the project's history), and "revert to this version" (sent with If-Match, recorded
// as a new change).
import { useEffect, useState } from 'preact/hooks'
import { api, ApiError, seg } from '../ui/api.ts'
import { ConfirmDialog } from '../ui/dialog.tsx'
import { exact } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { toast } from '../ui/toasts.tsx'
import { FlagTabs } from './flag-tabs.tsx'
import { Diff, WhoWhen } from './history-entry.tsx'
import { base, lastChange } from './project-data.ts'
import type { Flag, HistoryEntry } from './types.ts'

export function FlagHistory({ id, flagKey }: { id: string; flagKey: string }) {
  const [entries, setEntries] = useState<HistoryEntry[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [reverting, setReverting] = useState<HistoryEntry | null>(null)
  const [revertError, setRevertError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const url = `${base(id)}/flags/${seg(flagKey)}/history`

  const load = async (before?: string) => {
    try {
      const r = await api<{ history: HistoryEntry[]; next_before: string | null }>('GET', `${url}?limit=50${before ? `&before=${encodeURIComponent(before)}` : ''}`)
      setEntries((prev) => (before ? [...(prev ?? []), ...r.data.history] : r.data.history))
      setNext(r.data.next_before)
      setError(null)
    } catch (e) {
      setError((e as Error).message)
    }
  }
  useEffect(() => void load(), [id, flagKey])
  useEffect(() => {
    const c = lastChange.value
    if (c && c.kind === 'flag' && c.key === flagKey) void load()
  }, [lastChange.value])

  return (
    <Page title={`${flagKey}: history`}>
      <FlagTabs id={id} flagKey={flagKey} />
      {error && <Notice kind="error">{error}</Notice>}
      {entries && entries.length === 0 && <Notice>No changes recorded.</Notice>}
      {entries && (
        <ol class="history" reversed>
          {entries.map((e, i) => (
            <li key={e.id} class="card">
              <div class="rule-head">
                <h2 class="h3">
                  {e.type.replace('flag.', '')}
                  {e.environment ? ` in ${e.environment}` : ''}
                </h2>
                {i > 0 && e.after !== null && (
                  <button type="button" class="small" aria-label={`Revert to this version (${exact(e.at)})`} onClick={() => (setReverting(e), setRevertError(null))}>
                    Revert to this version
                  </button>
                )}
              </div>
              <WhoWhen entry={e} />
              <Diff entry={e} />
            </li>
          ))}
        </ol>
      )}
      {next && (
        <button type="button" onClick={() => load(next)}>
          Older changes
        </button>
      )}
      <ConfirmDialog
        open={!!reverting}
        title="Revert to this version?"
        confirmLabel="Revert"
        busy={busy}
        error={revertError}
        onClose={() => setReverting(null)}
        onConfirm={async () => {
          setBusy(true)
          try {
            // The version it is applied on: the flag as it is now.
            const cur = await api<Flag>('GET', `${base(id)}/flags/${seg(flagKey)}`)
            await api('POST', `${url}/${seg(reverting!.id)}/revert`, { ifMatch: cur.version })
            toast(`${flagKey} reverted to the version of ${exact(reverting!.at)}`)
            setReverting(null)
            await load()
          } catch (err) {
            setRevertError(err instanceof ApiError ? err.message : String(err))
          } finally {
            setBusy(false)
          }
        }}
      >
        <p>
          {flagKey} becomes what it was after the change of {reverting && exact(reverting.at)}, in every environment. The revert is recorded as a new change; later changes stay in the history.
        </p>
      </ConfirmDialog>
    </Page>
  )
}
