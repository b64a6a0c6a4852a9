// The browser bundle of a service's web console (src/console/<name>/main.tsx, Preact JSX), built by
// esbuild into .console-build/<name>/ with content-hashed file names: on the first request that
// needs it (and again when the sources changed since), or ahead of time by `npm run build:console`.
// No separate step for a user: `npm install && npm start` is enough. A manifest records the
// sources' fingerprint (every file's path, size and mtime under src/console/), so a build is
// redone only when a source changed, was added or was removed. Until a console has its entry
// file, a placeholder bundle is built in its place.
import { createHash } from 'node:crypto'
import { existsSync, promises as fs } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { logger } from '../logger.ts'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
export const CONSOLE_SOURCES = path.join(REPO_ROOT, 'src/console')
export const CONSOLE_OUT = path.join(REPO_ROOT, '.console-build')

export interface ConsoleManifest {
  /** Of the sources the bundle was built from (fingerprint()). */
  fingerprint: string
  /** File names (in the output folder) of the entry's script and stylesheet. */
  js: string
  css: string | null
  /** Every file the build wrote: the only names /console/assets/ serves. */
  files: string[]
  /** The entry did not exist yet: a placeholder was built. */
  placeholder: boolean
  built_at: string
}

export interface ConsoleBundleOptions {
  /** The console's folder under src/console/ (e.g. "flags"); its entry is main.tsx there. */
  name: string
  sourceDir?: string
  outDir?: string
}

async function walk(dir: string, out: string[]): Promise<void> {
  let entries
  try {
    entries = await fs.readdir(dir, { withFileTypes: true })
  } catch {
    return
  }
  for (const e of entries) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) await walk(p, out)
    else if (e.isFile()) out.push(p)
  }
}

/** Path, size and mtime of every file under the sources, hashed: moves when anything there changes. */
export async function fingerprint(sourceDir: string): Promise<string> {
  const files: string[] = []
  await walk(sourceDir, files)
  files.sort()
  const h = createHash('sha256')
  for (const f of files) {
    const st = await fs.stat(f).catch(() => null)
    if (st) h.update(`${path.relative(sourceDir, f)}\0${st.size}\0${st.mtimeMs}\n`)
  }
  return h.digest('hex').slice(0, 32)
}

const PLACEHOLDER = `
const root = document.getElementById('app') || document.body
const p = document.createElement('p')
p.textContent = 'The console is not built yet: its sources (src/console/) have no entry point.'
root.replaceChildren(p)
`

async function writeAtomically(file: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  await fs.writeFile(tmp, data)
  await fs.rename(tmp, file)
}

async function readManifest(outDir: string): Promise<ConsoleManifest | null> {
  try {
    return JSON.parse(await fs.readFile(path.join(outDir, 'manifest.json'), 'utf8')) as ConsoleManifest
  } catch {
    return null
  }
}

/** Builds the bundle now (whatever the manifest says); returns the new manifest. */
export async function buildConsole(opts: ConsoleBundleOptions): Promise<ConsoleManifest> {
  const sourceDir = opts.sourceDir ?? CONSOLE_SOURCES
  const outDir = opts.outDir ?? path.join(CONSOLE_OUT, opts.name)
  const entry = path.join(sourceDir, opts.name, 'main.tsx')
  const print = await fingerprint(sourceDir)
  const placeholder = !existsSync(entry)
  const esbuild = await import('esbuild')
  const result = await esbuild.build({
    ...(placeholder ? { stdin: { contents: PLACEHOLDER, loader: 'js', sourcefile: 'main.js', resolveDir: sourceDir } } : { entryPoints: { main: entry } }),
    bundle: true,
    write: false,
    // The repository's packages, wherever the sources are (tests build from a temporary folder).
    nodePaths: [path.join(REPO_ROOT, 'node_modules')],
    outdir: outDir,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    // React libraries, if one is ever used, get Preact's compatibility layer.
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat', 'react/jsx-runtime': 'preact/jsx-runtime' },
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    loader: { '.svg': 'file', '.png': 'file', '.woff2': 'file', '.woff': 'file' },
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
    metafile: true,
  })
  await fs.mkdir(outDir, { recursive: true })
  const files: string[] = []
  let js = ''
  let css: string | null = null
  for (const f of result.outputFiles) {
    const name = path.relative(outDir, f.path)
    files.push(name)
    // Content-hashed names: a file already there has these very bytes.
    if (!existsSync(f.path)) await writeAtomically(f.path, f.contents)
  }
  for (const [out, meta] of Object.entries(result.metafile!.outputs)) {
    const name = path.relative(outDir, path.resolve(REPO_ROOT, out))
    if (meta.entryPoint !== undefined && name.endsWith('.js')) {
      js = name
      if (meta.cssBundle) css = path.relative(outDir, path.resolve(REPO_ROOT, meta.cssBundle))
    }
  }
  if (!js) js = files.find((f) => f.endsWith('.js'))!
  if (css === null) css = files.find((f) => f.startsWith('main-') && f.endsWith('.css')) ?? null
  const manifest: ConsoleManifest = { fingerprint: print, js, css, files, placeholder, built_at: new Date().toISOString() }
  await writeAtomically(path.join(outDir, 'manifest.json'), JSON.stringify(manifest, null, 2))
  await prune(outDir, new Set(files))
  return manifest
}

/** Files of earlier builds are kept an hour (a page loaded before the rebuild still asks for them), then removed. */
const KEEP_OLD_MS = 3_600_000

async function prune(outDir: string, current: Set<string>): Promise<void> {
  for (const name of await fs.readdir(outDir).catch(() => [] as string[])) {
    if (name === 'manifest.json' || current.has(name)) continue
    const file = path.join(outDir, name)
    const st = await fs.stat(file).catch(() => null)
    if (st && Date.now() - st.mtimeMs > KEEP_OLD_MS) await fs.rm(file, { force: true }).catch(() => {})
  }
}

/**
 * A console bundle built when missing or stale. `current()` answers the manifest to serve, after
 * building if needed; the sources are looked at again at most once per `recheckMs`, and builds
 * never overlap (requests arriving meanwhile wait for the one build).
 */
export class ConsoleBundle {
  private manifest: ConsoleManifest | null = null
  private checkedAt = 0
  private running: Promise<ConsoleManifest> | null = null
  /** Where the bundle is served from (a temporary folder when the repository's is not writable). */
  outDir: string
  private readonly sourceDir: string

  constructor(
    private readonly opts: ConsoleBundleOptions & { recheckMs?: number },
  ) {
    this.sourceDir = opts.sourceDir ?? CONSOLE_SOURCES
    this.outDir = opts.outDir ?? path.join(CONSOLE_OUT, opts.name)
  }

  current(): Promise<ConsoleManifest> {
    if (this.manifest && Date.now() - this.checkedAt < (this.opts.recheckMs ?? 1_000)) return Promise.resolve(this.manifest)
    if (this.running) return this.running
    const run = (async () => {
      const print = await fingerprint(this.sourceDir)
      let m = this.manifest?.fingerprint === print ? this.manifest : await readManifest(this.outDir)
      if (!m || m.fingerprint !== print || !m.files.every((f) => existsSync(path.join(this.outDir, f)))) {
        const started = Date.now()
        try {
          m = await buildConsole({ ...this.opts, sourceDir: this.sourceDir, outDir: this.outDir })
        } catch (err) {
          // A read-only install (a container running as another user than the files' owner): build where we may write.
          const code = (err as NodeJS.ErrnoException).code
          if (code !== 'EACCES' && code !== 'EROFS' && code !== 'EPERM') throw err
          this.outDir = path.join(os.tmpdir(), `queueworks-console-${process.getuid?.() ?? 0}`, this.opts.name)
          m = await buildConsole({ ...this.opts, sourceDir: this.sourceDir, outDir: this.outDir })
        }
        logger.info({ console: this.opts.name, ms: Date.now() - started, placeholder: m.placeholder }, 'console bundle built')
      }
      this.manifest = m
      this.checkedAt = Date.now()
      return m
    })()
    this.running = run.finally(() => {
      this.running = null
    })
    return this.running
  }
}
