// A flag's usage: evaluations per hour over the last 24 hours, one series per environment (SVG
// bars), when it was last evaluated, and how the evaluations split between its variants.
import { useEffect, useState } from 'preact/hooks'
import { api, seg } from '../ui/api.ts'
import { BarChart } from '../ui/chart.tsx'
import { Time } from '../ui/format.tsx'
import { Notice, Page } from '../ui/page.tsx'
import { TableWrap } from '../ui/table.tsx'
import { FlagTabs } from './flag-tabs.tsx'
import { base, environments, resynced } from './project-data.ts'

interface Counts {
  service: number
  in_process: number
}
interface Usage {
  from: string
  to: string
  totals: Counts & { variants: Record<string, Counts> }
  periods: Array<Counts & { start: string }>
}

const HOUR = 3_600_000

export function FlagUsage({ id, flagKey }: { id: string; flagKey: string }) {
  const envs = environments.value.map((e) => e.name)
  const [usage, setUsage] = useState<Record<string, Usage> | null>(null)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    if (!envs.length) return
    Promise.all(envs.map((env) => api<Usage>('GET', `${base(id)}/flags/${seg(flagKey)}/usage?environment=${encodeURIComponent(env)}&period=hour&hours=24`)))
      .then((answers) => {
        const u: Record<string, Usage> = {}
        envs.forEach((env, i) => (u[env] = answers[i]!.data))
        setUsage(u)
        setError(null)
      })
      .catch((e) => setError((e as Error).message))
  }, [id, flagKey, envs.join(','), resynced.value])

  if (!usage)
    return (
      <Page title={`${flagKey}: usage`}>
        <FlagTabs id={id} flagKey={flagKey} />
        {error ? <Notice kind="error">{error}</Notice> : <p>Loading…</p>}
      </Page>
    )
  // 24 hourly buckets ending with the current hour.
  const end = Math.floor(Date.now() / HOUR) * HOUR
  const buckets = Array.from({ length: 24 }, (_, i) => new Date(end - (23 - i) * HOUR).toISOString())
  const series = envs.map((env) => {
    const byStart = new Map(usage[env]!.periods.map((p) => [Date.parse(p.start), p.service + p.in_process]))
    return { name: env, values: buckets.map((b) => byStart.get(Date.parse(b)) ?? 0) }
  })
  const lastPeriod = envs
    .flatMap((env) => usage[env]!.periods.filter((p) => p.service + p.in_process > 0).map((p) => p.start))
    .sort()
    .pop()
  return (
    <Page title={`${flagKey}: usage`}>
      <FlagTabs id={id} flagKey={flagKey} />
      <p>
        Last evaluated: {lastPeriod ? <>in the hour starting <Time iso={lastPeriod} /></> : 'not in the last 24 hours'}. Counts reach the service within a minute (providers report every 60 s).
      </p>
      <BarChart title="Evaluations per hour, last 24 hours, by environment" buckets={buckets} series={series} bucketLabel={(b) => `${b.slice(11, 13)}:00`} />
      <h2>Variant split</h2>
      {envs.map((env) => {
        const t = usage[env]!.totals
        const total = t.service + t.in_process
        const variants = Object.entries(t.variants).sort((a, b) => b[1].service + b[1].in_process - (a[1].service + a[1].in_process))
        return (
          <TableWrap key={env} label={`Variant split in ${env}`}>
            <table>
              <caption>
                {env}: {total} evaluation{total === 1 ? '' : 's'} in 24 hours ({t.service} on the service, {t.in_process} in process)
              </caption>
              <thead>
                <tr>
                  <th scope="col">Variant</th>
                  <th scope="col" class="num">
                    Evaluations
                  </th>
                  <th scope="col" class="num">
                    Share
                  </th>
                  <th scope="col" class="hide-narrow">
                    <span class="visually-hidden">Bar</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {variants.length === 0 && (
                  <tr>
                    <td colSpan={4} class="muted">
                      No evaluations
                    </td>
                  </tr>
                )}
                {variants.map(([name, c]) => {
                  const n = c.service + c.in_process
                  const share = total ? (100 * n) / total : 0
                  return (
                    <tr key={name}>
                      <th scope="row">{name}</th>
                      <td class="num">{n}</td>
                      <td class="num">{share.toFixed(1)} %</td>
                      <td class="hide-narrow">
                        <svg class="split-bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
                          <rect class="bar bar-0" x="0" y="0" height="10" width={share} />
                        </svg>
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </TableWrap>
        )
      })}
    </Page>
  )
}
