// The embedded in-memory MongoDB-compatible engine (jongodb) for local runs and tests.
// It keeps data only in memory; `start` snapshots it to a data folder (kept-store.ts). Production sets MONGO_URL.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import getPort from 'get-port'
import { spawnUntilReady, type StartedChild } from './child.ts'

const require = createRequire(import.meta.url)

export interface EmbeddedMongo {
  url: string
  child: StartedChild
}

export async function startMongoEngine(): Promise<EmbeddedMongo> {
  const pkg = require.resolve('@jongodb/memory-server-bin-linux-x64-gnu/package.json')
  const bin = join(dirname(pkg), 'bin', 'jongodb')
  const port = await getPort({ host: '127.0.0.1' })
  const { child, value } = await spawnUntilReady(
    bin,
    ['--host=127.0.0.1', `--port=${port}`],
    (line) => {
      const m = /JONGODB_URI=(\S+)/.exec(line)
      return m ? m[1] : undefined
    },
  )
  return { url: value, child }
}
