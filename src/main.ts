// CLI entry. One build serves every role:
//   start                                   everything on embedded defaults (or REDIS_URL/MONGO_URL)
//   api --service invoice[,flags,webhooks]  HTTP APIs only
//   worker [--queues a,b] [--concurrency N] job processors only
// Each role's code is loaded only when it runs (src/api-role.ts, src/worker-role.ts): a worker
// process then loads none of the APIs.
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import type { Service } from './platform/plans.ts'
import { loadConfig } from './platform/config.ts'
import { startTracing } from './platform/tracing.ts'

/** The services `api` runs when none is named (src/services.ts defines them). */
const SERVICE_NAMES: Service[] = ['invoice', 'flags', 'webhooks']

export const USAGE = 'usage: main.ts start [--ephemeral] [--accept-journal-damage] | api [--service invoice,flags,webhooks] | worker [--queues q1,q2] [--concurrency N]'

export type Command =
  | { cmd: 'start'; ephemeral: boolean; acceptJournalDamage: boolean }
  | { cmd: 'api'; services: string[] }
  | { cmd: 'worker'; queues: string[]; concurrency?: number }

/** CLI arguments to a command (exported so that docker-compose.yml is checked against the CLI). */
export function parseCommand(argv: string[]): Command | null {
  const [cmd, ...rest] = argv
  const { values } = parseArgs({
    args: rest,
    options: { service: { type: 'string' }, queues: { type: 'string' }, concurrency: { type: 'string' }, ephemeral: { type: 'boolean' }, 'accept-journal-damage': { type: 'boolean' } },
    allowPositionals: false,
  })
  const list = (s?: string) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : [])
  switch (cmd) {
    case 'start':
      return { cmd, ephemeral: values.ephemeral === true, acceptJournalDamage: values['accept-journal-damage'] === true }
    case 'api':
      return { cmd, services: values.service ? list(values.service) : SERVICE_NAMES }
    case 'worker': {
      // An empty value is a mistake too, not "use the default".
      const n = values.concurrency !== undefined ? Number(values.concurrency) : undefined
      if (n !== undefined && !(Number.isInteger(n) && n > 0 && n <= 256)) throw new Error('--concurrency must be an integer from 1 to 256')
      return { cmd, queues: list(values.queues), concurrency: n }
    }
    default:
      return null
  }
}

async function main(argv: string[]): Promise<void> {
  const command = parseCommand(argv)
  if (!command) {
    console.error(USAGE)
    process.exit(2)
  }
  const config = loadConfig()
  // Before anything builds queues, workers or apps: they pick their tracing up when created.
  const role = command.cmd === 'api' ? command.services.join('-') : command.cmd
  await startTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: `queueworks-${role}` })
  switch (command.cmd) {
    case 'start':
      return (await import('./api-role.ts')).cmdStart(config, { ephemeral: command.ephemeral, acceptJournalDamage: command.acceptJournalDamage })
    case 'api':
      return (await import('./api-role.ts')).cmdApi(config, command.services)
    case 'worker':
      return (await import('./worker-role.ts')).cmdWorker(config, command.queues, command.concurrency)
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  })
}
