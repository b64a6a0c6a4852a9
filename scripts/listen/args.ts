// The command line of `queueworks listen`: options, their checks (a bad value exits 2 with the
// reason and the usage) and the defaults from the environment. docs/webhooks-tools.md, "`listen` CLI".
import { parseCommandLine } from '../command-line.ts'
import type { StartPoint } from './catch-up.ts'
import { parseHeaderOption } from './deliver.ts'
import { FilterError, headerFilter, methodFilter, pathFilter, type Filters } from './filters.ts'
import { fail } from './output.ts'
import { stateFilePath } from './resume-state.ts'

export const MAX_CONCURRENCY = 16

/** --concurrency N: an integer from 1 to MAX_CONCURRENCY, or throws with the reason. */
export function parseConcurrency(c: string): number {
  if (!/^\d{1,3}$/.test(c) || Number(c) < 1 || Number(c) > MAX_CONCURRENCY) throw new Error(`--concurrency must be an integer from 1 to ${MAX_CONCURRENCY} (got "${c}")`)
  return Number(c)
}

export function usage(): string {
  return [
    'usage: queueworks listen <endpoint token> --forward-to http://localhost:8080/path',
    '         [--key wv_… (or WEBHOOKS_API_KEY)] [--api http://localhost:3003 (or WEBHOOKS_URL)]',
    '         [--since ID|TIME | --replay-last N | --no-resume] [--state-file FILE (or QUEUEWORKS_LISTEN_STATE)]',
    "         [--filter-path GLOB|re:REGEX]… [--filter-method M[,M]]… [--filter-headers 'Name[: value]']…",
    `         [--header 'Name: value']… [--json] [--concurrency 1-${MAX_CONCURRENCY}]`,
    '       queueworks trigger <sender> <endpoint token> --secret S   (queueworks trigger --help)',
  ].join('\n')
}

export interface ListenOptions {
  token: string
  forwardTo: string
  key: string
  api: string
  replayLast: number
  since: StartPoint | null
  resume: boolean
  stateFile: string
  filters: Filters
  extraHeaders: [string, string][]
  json: boolean
  concurrency: number
}

export function parseListenArgs(argv: string[]): ListenOptions {
  const { values, args } = parseCommandLine({
    command: 'listen',
    argv,
    options: {
      'forward-to': { type: 'string' },
      key: { type: 'string' },
      api: { type: 'string' },
      'replay-last': { type: 'string' },
      since: { type: 'string' },
      'no-resume': { type: 'boolean' },
      'state-file': { type: 'string' },
      'filter-path': { type: 'string', multiple: true },
      'filter-method': { type: 'string', multiple: true },
      'filter-headers': { type: 'string', multiple: true },
      header: { type: 'string', multiple: true },
      json: { type: 'boolean' },
      concurrency: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    usage,
    fail,
  })
  if (args.length !== 1) fail(2, `expected one endpoint token\n${usage()}`)
  const forwardTo = values['forward-to']
  if (!forwardTo) fail(2, `--forward-to is required\n${usage()}`)
  let target: URL
  try {
    target = new URL(forwardTo)
  } catch {
    fail(2, `--forward-to must be an http:// or https:// URL (got "${forwardTo}")`)
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') fail(2, `--forward-to must be an http:// or https:// URL (got "${forwardTo}")`)
  const key = values.key ?? process.env.WEBHOOKS_API_KEY
  if (!key) fail(2, 'an API key is required: --key wv_… or WEBHOOKS_API_KEY')
  const api = (values.api ?? process.env.WEBHOOKS_URL ?? 'http://localhost:3003').replace(/\/+$/, '')
  let replayLast = 0
  if (values['replay-last'] !== undefined) {
    if (!/^\d{1,4}$/.test(values['replay-last']) || Number(values['replay-last']) > 500) fail(2, `--replay-last must be an integer from 0 to 500 (got "${values['replay-last']}")`)
    replayLast = Number(values['replay-last'])
  }
  let since: StartPoint | null = null
  if (values.since !== undefined) {
    const v = values.since
    // An id names the first capture wanted again; a time, the first moment (as the list's `since`).
    if (/^\d{1,15}$/.test(v) && Number(v) >= 1) since = { after: Number(v) - 1 }
    else if (/^\d{4}-\d{2}-\d{2}/.test(v) && !Number.isNaN(Date.parse(v))) since = { since: v }
    else fail(2, `--since must be a capture id (1, 2, …) or an ISO 8601 time such as 2026-11-26T09:00:00Z (got "${v}")`)
  }
  const chosen = [since !== null && '--since', values['replay-last'] !== undefined && '--replay-last', values['no-resume'] && '--no-resume'].filter(Boolean)
  if (chosen.length > 1) fail(2, `${chosen.join(' and ')} choose different starting points: give one`)

  let filters: Filters
  let extraHeaders: [string, string][]
  try {
    filters = {
      paths: (values['filter-path'] ?? []).map(pathFilter),
      methods: methodFilter(values['filter-method'] ?? []),
      headers: (values['filter-headers'] ?? []).map(headerFilter),
    }
    extraHeaders = (values.header ?? []).map(parseHeaderOption)
  } catch (err) {
    fail(2, (err as FilterError).message)
  }
  let concurrency = 1
  try {
    if (values.concurrency !== undefined) concurrency = parseConcurrency(values.concurrency)
  } catch (err) {
    fail(2, (err as Error).message)
  }
  return {
    token: args[0]!,
    forwardTo: target.href,
    key,
    api,
    replayLast,
    since,
    resume: !values['no-resume'],
    stateFile: stateFilePath(values['state-file']),
    filters,
    extraHeaders,
    json: Boolean(values.json),
    concurrency,
  }
}
