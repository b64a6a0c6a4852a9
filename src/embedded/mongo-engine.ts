// The embedded in-memory MongoDB-compatible engine (jongodb) for local runs and tests.
// It keeps data only in memory; `start` snapshots it to a data folder (kept-store.ts). Production sets MONGO_URL.
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { spawnUntilReady, type StartedChild } from './child.ts'

const require = createRequire(import.meta.url)

/**
 * Heap settings for the engine (a GraalVM native image with the serial collector). By default its
 * young generation is a few tens of MB: under a stream of captures it paused every ~80 ms for
 * 5–20 ms, and as the data grew it ran full collections (0.3–0.7 s, copying every live byte) every
 * few seconds. A 128 MB young generation and a 1 GB starting heap make both rarer: the engine's own
 * p99 per insert at 50,000–100,000 stored went from 16–30 ms to 9–14 ms (docs/embedded-store.md).
 * The heap is only reserved: RSS grows with what is stored, as before.
 */
const ENGINE_HEAP_ARGS = ['-Xms1g', '-Xmn128m']

export interface EmbeddedMongo {
  url: string
  child: StartedChild
}

/**
 * `port`: where to listen (benchmarks set it, docs/benchmarks.md). Otherwise port 0: the engine
 * binds a port the kernel picks and prints it. A port probed free beforehand could be taken by
 * another process (or by a service told to listen there) before the engine binds it.
 */
export async function startMongoEngine(opts: { port?: number } = {}): Promise<EmbeddedMongo> {
  const pkg = require.resolve('@jongodb/memory-server-bin-linux-x64-gnu/package.json')
  const bin = join(dirname(pkg), 'bin', 'jongodb')
  const port = opts.port ?? 0
  const { child, value } = await spawnUntilReady(
    bin,
    ['--host=127.0.0.1', `--port=${port}`, ...ENGINE_HEAP_ARGS],
    (line) => {
      const m = /JONGODB_URI=(\S+)/.exec(line)
      return m ? m[1] : undefined
    },
  )
  return { url: value, child }
}
