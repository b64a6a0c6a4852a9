#!/usr/bin/env node
// `npx queueworks <command>` from the repository: runs the TypeScript CLI through tsx.
// Commands: listen (scripts/listen.ts), trigger (scripts/trigger.ts).
import { register } from 'tsx/esm/api'

const COMMANDS = { listen: '../scripts/listen.ts', trigger: '../scripts/trigger.ts' }
const [command] = process.argv.slice(2)
if (!Object.hasOwn(COMMANDS, command ?? '')) {
  process.stderr.write(
    'usage: queueworks listen <endpoint token> --forward-to http://localhost:8080/path [--key wv_…] [--api URL] [options: queueworks listen --help]\n' +
      '       queueworks trigger <stripe|github|shopify|svix|standard-webhooks> --endpoint <token> --secret S [--api URL]\n',
  )
  process.exit(2)
}
register()
await import(COMMANDS[command])
