// "Why did this user get that?": a context typed or pasted as JSON, evaluated in one request for
// every environment side by side, each answer with its value, variant, reason and the rule that
// matched (its conditions spelled out).
import { useState } from 'preact/hooks'
import { api } from '../ui/api.ts'
import { FormError, SelectField, TextArea } from '../ui/fields.tsx'
import { showValue } from '../ui/format.tsx'
import { Page } from '../ui/page.tsx'
import { operatorInfo } from './operators.ts'
import { base, environments } from './project-data.ts'
import type { Rule } from './types.ts'

interface Answer {
  value: unknown
  variant?: string | null
  reason: string
  rule_index: number | null
  rule?: Rule | null
  error?: string
}
type Result = Record<string, Record<string, Answer>>

export function describeRule(r: Rule): string {
  const parts = r.conditions.map((c) => `${c.negate ? 'not ' : ''}${c.attribute} ${operatorInfo(c.operator).label} ${Array.isArray(c.value) ? c.value.join(', ') : String(c.value)}${c.case_insensitive ? ' (any case)' : ''}`)
  for (const s of r.segments ?? []) parts.push(`in segment ${s}`)
  return parts.length ? parts.join(' and ') : 'everyone'
}

export function Playground({ id }: { id: string }) {
  const [context, setContext] = useState('{\n  "targetingKey": "user-42",\n  "country": "DE",\n  "plan": "pro"\n}')
  const [contextError, setContextError] = useState<string | null>(null)
  const [only, setOnly] = useState('')
  const [result, setResult] = useState<Result | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const envs = environments.value.map((e) => e.name)
  const flags = result ? [...new Set(Object.values(result).flatMap((r) => Object.keys(r)))].sort() : []

  return (
    <Page title="Playground">
      <p>Which value does a user get, and why? Type or paste the user's context; every environment answers side by side.</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault()
          setContextError(null)
          setError(null)
          let ctx: unknown
          try {
            ctx = JSON.parse(context)
          } catch (err) {
            return setContextError(`Not valid JSON: ${(err as Error).message}`)
          }
          if (!ctx || typeof ctx !== 'object' || Array.isArray(ctx)) return setContextError('The context is a JSON object of attributes')
          setBusy(true)
          try {
            const body: Record<string, unknown> = { context: ctx }
            if (only.trim()) body.flags = [only.trim()]
            const r = await api<{ environments: Result }>('POST', `${base(id)}/playground`, { body })
            setResult(r.data.environments)
          } catch (err) {
            const ae = err as { field?: string | null; message: string }
            if (ae.field?.startsWith('context')) setContextError(ae.message)
            else setError(ae.message)
          } finally {
            setBusy(false)
          }
        }}
      >
        <TextArea id="context" label="Context (JSON)" rows={6} value={context} error={contextError} hint="targetingKey (or user_id) is what rollouts and variants hash by default." onValue={setContext} />
        <div class="inline-fields">
          <div class="field">
            <label for="only-flag">Only this flag (optional)</label>
            <input id="only-flag" value={only} autoComplete="off" onInput={(e) => setOnly((e.currentTarget as HTMLInputElement).value)} />
          </div>
          <button type="submit" class="primary" disabled={busy}>
            Evaluate in {envs.length || 'every'} environment{envs.length === 1 ? '' : 's'}
          </button>
        </div>
        <FormError error={error} />
      </form>
      {result && (
        <section aria-labelledby="results-title">
          <h2 id="results-title">
            {flags.length} flag{flags.length === 1 ? '' : 's'} × {Object.keys(result).length} environment{Object.keys(result).length === 1 ? '' : 's'}
          </h2>
          {flags.map((flag) => (
            <section class="card" key={flag} aria-labelledby={`pg-${flag}`}>
              <h3 id={`pg-${flag}`}>
                <a href={`/projects/${id}/flags/${encodeURIComponent(flag)}`}>{flag}</a>
              </h3>
              <div class="side-by-side">
                {Object.entries(result).map(([env, answers]) => {
                  const a = answers[flag]
                  return (
                    <div class="result-env" key={env}>
                      <h4>{env}</h4>
                      {a ? (
                        <dl class="facts">
                          <dt>Value</dt>
                          <dd>
                            <code>{showValue(a.value)}</code>
                          </dd>
                          <dt>Variant</dt>
                          <dd>{a.variant ?? '—'}</dd>
                          <dt>Reason</dt>
                          <dd>{a.reason}</dd>
                          <dt>Matched</dt>
                          <dd>{a.rule_index !== null && a.rule_index !== undefined ? `Rule ${a.rule_index + 1}${a.rule ? `: ${describeRule(a.rule)}` : ''}` : a.reason === 'DISABLED' ? 'nothing (the flag is off)' : 'no rule (default)'}</dd>
                          {a.error && (
                            <>
                              <dt>Error</dt>
                              <dd>{a.error}</dd>
                            </>
                          )}
                        </dl>
                      ) : (
                        <p class="muted">Not in this environment</p>
                      )}
                    </div>
                  )
                })}
              </div>
            </section>
          ))}
        </section>
      )}
    </Page>
  )
}
