// The flags of a project: search as you type, filters (type, on/off in an environment, tag, no
// evaluation in N days), sort, counts, and a new-flag dialog. Rows are prepared once per load
// (flag-filter.ts) and at most PAGE rows are drawn at a time, so a keystroke at 1,000 flags is one
// pass over plain objects and a small DOM update. Follows the project's change stream.
import { computed, signal } from '@preact/signals'
import { useEffect, useState } from 'preact/hooks'
import { api, seg } from '../ui/api.ts'
import { Dialog } from '../ui/dialog.tsx'
import { FormError, SelectField, TextField } from '../ui/fields.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { navigate } from '../ui/router.ts'
import { TableWrap } from '../ui/table.tsx'
import { keyProblem, parseValue } from './draft.ts'
import { filterRows, NO_FILTER, sortRows, tagsOf, toRows, type Filter, type ListRow, type SortKey } from './flag-filter.ts'
import { base, environments, lastChange, resynced } from './project-data.ts'
import type { Flag, FlagType } from './types.ts'
import { ValueInput } from './value-input.tsx'

const PAGE = 100

const rows = signal<ListRow[]>([])
const filter = signal<Filter>(NO_FILTER)
const sortBy = signal<SortKey>('key')
const shown = signal(PAGE)
const loadedFor = signal<string | null>(null)
/** The project the filter was set for: another project starts from no filter. */
let filterFor: string | null = null
const listError = signal<string | null>(null)
const sorted = computed(() => sortRows(rows.value, sortBy.value))
const visible = computed(() => filterRows(sorted.value, filter.value))

async function loadFlags(id: string): Promise<void> {
  const envs = environments.value.length ? environments.value.map((e) => e.name) : ['production']
  try {
    const lists = await Promise.all(envs.map((env) => api<{ flags: Flag[] }>('GET', `${base(id)}/flags?environment=${encodeURIComponent(env)}`)))
    const byEnv: Record<string, Flag[]> = {}
    envs.forEach((env, i) => (byEnv[env] = lists[i]!.data.flags))
    rows.value = toRows(byEnv)
    loadedFor.value = id
    listError.value = null
  } catch (e) {
    listError.value = (e as Error).message
  }
}

const setFilter = (patch: Partial<Filter>) => {
  filter.value = { ...filter.value, ...patch }
  shown.value = PAGE
}

const FlagRow = ({ r, id, envs }: { r: ListRow; id: string; envs: string[] }) => (
  <tr>
    <th scope="row">
      <a class="flag-key" href={`/projects/${id}/flags/${seg(r.flag.key)}`}>
        {r.flag.key}
      </a>
      {r.flag.name !== r.flag.key && <div class="muted">{r.flag.name}</div>}
    </th>
    <td class="hide-narrow">{r.flag.type ?? 'string (untyped)'}</td>
    {envs.map((e) => (
      <td key={e}>{r.enabledIn[e] ? <span class="pill on">On</span> : <span class="pill off">Off</span>}</td>
    ))}
    <td class="hide-narrow">
      {(r.flag.tags ?? []).map((t) => (
        <span key={t} class="pill tag">
          {t}
        </span>
      ))}
    </td>
    <td class="hide-narrow">{r.lastEvaluated['*'] ? <Time iso={new Date(r.lastEvaluated['*']).toISOString()} /> : <span class="muted">never</span>}</td>
  </tr>
)

export function FlagList({ id }: { id: string }) {
  const [creating, setCreating] = useState(false)
  const envs = environments.value.map((e) => e.name)
  useEffect(() => {
    if (loadedFor.value !== id) rows.value = []
    // Only when the project changes: the environments arriving (or arriving again) while the first
    // load is on its way must not wipe a filter typed meanwhile.
    if (filterFor !== id) {
      filterFor = id
      filter.value = NO_FILTER
    }
    // The filter's environment was renamed or deleted: it looks at production again.
    if (environments.value.length && !envs.includes(filter.value.env)) filter.value = { ...filter.value, env: 'production' }
    if (environments.value.length) void loadFlags(id)
  }, [id, environments.value, resynced.value])
  // A change anywhere (another tab, the API) reloads the list; several within 150 ms count once.
  useEffect(() => {
    const c = lastChange.value
    if (!c || c.kind !== 'flag') return
    const t = setTimeout(() => void loadFlags(id), 150)
    return () => clearTimeout(t)
  }, [lastChange.value])

  const f = filter.value
  const list = visible.value
  const total = rows.value.length
  const tags = tagsOf(rows.value)
  return (
    <Page
      title="Flags"
      actions={
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          New flag
        </button>
      }
    >
      {listError.value && <Notice kind="error">{listError.value}</Notice>}
      <div role="search" class="filters" aria-label="Search and filter flags">
        <TextField id="flag-search" label="Search" type="search" value={f.q} placeholder="key, name or tag" autoComplete="off" onValue={(q) => setFilter({ q })} />
        <SelectField
          id="filter-type"
          label="Type"
          value={f.type}
          options={[{ value: '', label: 'Any type' }, { value: 'boolean', label: 'boolean' }, { value: 'string', label: 'string' }, { value: 'number', label: 'number' }, { value: 'object', label: 'object' }, { value: 'untyped', label: 'untyped (string)' }]}
          onValue={(type) => setFilter({ type })}
        />
        <SelectField id="filter-env" label="Environment" value={f.env} options={envs.map((e) => ({ value: e, label: e }))} onValue={(env) => setFilter({ env })} />
        <SelectField
          id="filter-state"
          label="State there"
          value={f.state}
          options={[{ value: '', label: 'On or off' }, { value: 'on', label: 'On' }, { value: 'off', label: 'Off' }]}
          onValue={(state) => setFilter({ state: state as Filter['state'] })}
        />
        <SelectField id="filter-tag" label="Tag" value={f.tag} options={[{ value: '', label: 'Any tag' }, ...tags.map((t) => ({ value: t, label: t }))]} onValue={(tag) => setFilter({ tag })} />
        <TextField id="filter-stale" label="Not evaluated in (days)" type="number" min="0" max="365" value={f.staleDays || ''} onValue={(v) => setFilter({ staleDays: Math.max(0, Math.floor(Number(v) || 0)) })} />
        <SelectField
          id="sort"
          label="Sort by"
          value={sortBy.value}
          options={[{ value: 'key', label: 'Key' }, { value: 'name', label: 'Name' }, { value: 'updated', label: 'Last changed' }, { value: 'last_evaluated', label: 'Last evaluated' }]}
          onValue={(v) => (sortBy.value = v as SortKey)}
        />
      </div>
      <p class="counts" id="flag-counts" role="status" data-query={f.q}>
        {loadedFor.value === id ? `${list.length} of ${total} flag${total === 1 ? '' : 's'}` : 'Loading flags…'}
        {loadedFor.value === id && envs.length > 0 && ` · on in ${f.env}: ${rows.value.filter((r) => r.enabledIn[f.env]).length}`}
      </p>
      {total > 0 && (
        <TableWrap label="Flags">
          <table id="flags-table">
            <caption class="visually-hidden">Flags matching the search and filters</caption>
            <thead>
              <tr>
                <th scope="col">Flag</th>
                <th scope="col" class="hide-narrow">
                  Type
                </th>
                {envs.map((e) => (
                  <th scope="col" key={e}>
                    {e}
                  </th>
                ))}
                <th scope="col" class="hide-narrow">
                  Tags
                </th>
                <th scope="col" class="hide-narrow">
                  Last evaluated
                </th>
              </tr>
            </thead>
            <tbody>
              {list.slice(0, shown.value).map((r) => (
                <FlagRow key={r.flag.key} r={r} id={id} envs={envs} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {list.length > shown.value && (
        <button type="button" onClick={() => (shown.value += PAGE)}>
          Show {Math.min(PAGE, list.length - shown.value)} more
        </button>
      )}
      {loadedFor.value === id && total === 0 && <Notice>No flags yet. Create the first one with “New flag”.</Notice>}
      <NewFlagDialog id={id} open={creating} onClose={() => setCreating(false)} />
    </Page>
  )
}

function NewFlagDialog({ id, open, onClose }: { id: string; open: boolean; onClose: () => void }) {
  const [key, setKey] = useState('')
  const [name, setName] = useState('')
  const [type, setType] = useState<string>('boolean')
  const [def, setDef] = useState('false')
  const [tags, setTags] = useState('')
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [formError, setFormError] = useState<string | null>(null)
  const t = type === 'untyped' ? undefined : (type as FlagType)
  return (
    <Dialog open={open} title="New flag" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault()
          const errs: Record<string, string> = {}
          const keyError = keyProblem(key)
          if (keyError) errs.key = keyError
          const dv = parseValue(t, def)
          if (dv.problem) errs.default_value = dv.problem
          setErrors(errs)
          setFormError(null)
          if (Object.keys(errs).length) return
          const body: Record<string, unknown> = { key, name: name.trim() || key, default_value: dv.value }
          if (t) body.type = t
          const tagList = tags.split(',').map((s) => s.trim()).filter(Boolean)
          if (tagList.length) body.tags = tagList
          try {
            await api('POST', `${base(id)}/flags`, { body })
            onClose()
            setKey('')
            setName('')
            setTags('')
            navigate(`/projects/${id}/flags/${seg(key)}`)
          } catch (err) {
            const ae = err as { field?: string | null; message: string }
            if (ae.field) setErrors({ [ae.field.split(/[.[]/)[0]!]: ae.message })
            else setFormError(ae.message)
          }
        }}
      >
        <TextField id="new-key" label="Key" required maxLength={128} value={key} error={errors.key} hint="Used by code; cannot be changed." autoComplete="off" onValue={setKey} />
        <TextField id="new-name" label="Name" maxLength={200} value={name} error={errors.name} onValue={setName} />
        <SelectField
          id="new-type"
          label="Type"
          value={type}
          error={errors.type}
          options={['boolean', 'string', 'number', 'object', 'untyped'].map((v) => ({ value: v, label: v === 'untyped' ? 'untyped (string values)' : v }))}
          onValue={(v) => {
            setType(v)
            setDef(v === 'boolean' ? 'false' : v === 'number' ? '0' : v === 'object' ? '{}' : '')
          }}
        />
        <ValueInput id="new-default" label="Default value" type={t} value={def} error={errors.default_value} onValue={setDef} />
        <TextField id="new-tags" label="Tags" value={tags} hint="Comma-separated, optional." error={errors.tags} onValue={setTags} />
        <p class="hint">A new flag is off in every environment until you turn it on.</p>
        <FormError error={formError} />
        <div class="buttons">
          <button type="submit" class="primary">
            Create flag
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  )
}

/** For the benchmark: the list's current filter and sizes. */
export const flagListState = { filter, visible, rows }
