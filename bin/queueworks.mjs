#!/usr/bin/env node
// `npx queueworks <command>` from the repository: runs the TypeScript CLI through tsx.
// Commands: listen (scripts/listen.ts).
import { register } from 'tsx/esm/api'

const [command] = process.argv.slice(2)
if (command !== 'listen') {
  process.stderr.write('usage: queueworks listen <endpoint token> --forward-to http://localhost:8080/path [--key wv_…] [--api URL] [--since ID|TIME | --replay-last N | --no-resume] [--state-file FILE]\n')
  process.exit(2)
}
register()
await import('../scripts/listen.ts')
