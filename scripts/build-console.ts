// `npm run build:console`: builds every web console's bundle now (the services also build it on
// the first request that needs it, when it is missing or older than its sources).
import { buildConsole } from '../src/platform/http/console-build.ts'

for (const name of ['flags']) {
  const started = Date.now()
  const m = await buildConsole({ name })
  console.log(`${name}: ${m.js}${m.css ? ` ${m.css}` : ''}${m.placeholder ? ' (placeholder: no src/console/' + name + '/main.tsx yet)' : ''} in ${Date.now() - started} ms`)
}
