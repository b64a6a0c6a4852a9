// Builds the installable package into dist/ (run by `npm pack`'s prepack, or `npm run build`):
// dist/index.js is src/index.ts bundled by esbuild with the service's rule engine
// (src/flags/engine of this repository) built in, so the tarball holds no path back into the
// repository; npm dependencies and the OpenFeature SDK stay imports (package.json lists them).
// dist/*.d.ts are the declarations tsc emits for the package's own files that its public types
// reach (index.d.ts first); none may reach into the engine.
// esbuild and typescript are the repository's devDependencies: the package is built from a clone.
// Two builds may run at once (two `npm pack`s: the package test and the docs examples in one
// test run), so dist/ is never emptied: each file is written beside it and renamed into place
// (a pack reading dist/ meanwhile sees whole files, old or new), and only then are files no build
// of these sources makes removed.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import ts from 'typescript'

const pkgDir = dirname(dirname(fileURLToPath(import.meta.url)))
const repo = dirname(dirname(pkgDir))
const dist = join(pkgDir, 'dist')
const entry = join(pkgDir, 'src', 'index.ts')
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'))

const staging = join(pkgDir, '.build-tmp')
mkdirSync(dist, { recursive: true })
mkdirSync(staging, { recursive: true })
const written = new Set()
function put(name, text) {
  const tmp = join(staging, `${name.replaceAll('/', '_')}.${process.pid}.${randomBytes(4).toString('hex')}`)
  writeFileSync(tmp, text)
  mkdirSync(dirname(join(dist, name)), { recursive: true })
  renameSync(tmp, join(dist, name))
  written.add(name.split('/')[0])
}

// Everything imported by name (dependencies, peer dependencies) stays an import; only files of
// this repository are bundled. A bare import the package does not declare would fail a user's
// install, so it is refused here.
const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})])
const undeclared = new Set()
const bundle = await build({
  entryPoints: [entry],
  outfile: join(dist, 'index.js'),
  write: false,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [
    {
      name: 'declared-imports-only',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:')) return undefined
          const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0]
          if (!declared.has(name)) undeclared.add(`${name} (imported by ${relative(repo, args.importer)})`)
          return undefined
        })
      },
    },
  ],
})
if (undeclared.size) throw new Error(`imports the package does not declare in package.json: ${[...undeclared].join(', ')}`)
put('index.js', bundle.outputFiles[0].contents)

// Declarations: tsc emits them for every file the entry point reaches (the engine's too); the
// package ships those its public types reach, which must all be its own (src/ → dist/, beside
// index.js). One that reaches the engine would need the engine's dependencies' types in a
// user's project (semver has none of its own), so it is refused: keep such types out of the
// exported API (sync-options.ts is why).
const options = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  esModuleInterop: true,
  skipLibCheck: true,
  allowImportingTsExtensions: true,
  declaration: true,
  emitDeclarationOnly: true,
  rootDir: repo,
  outDir: join(dist, 'tsc'),
  types: ['node'],
  typeRoots: [join(repo, 'node_modules', '@types')],
}
const program = ts.createProgram([entry], options)
const declarations = new Map()
const result = program.emit(undefined, (file, text) => declarations.set(file, text))
const problems = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics]
if (problems.length) throw new Error(ts.formatDiagnostics(problems, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => repo, getNewLine: () => '\n' }))

const emittedSrc = join(dist, 'tsc', relative(repo, join(pkgDir, 'src')))
const relativeImport = /(from\s+|import\()(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g
const queue = [join(emittedSrc, 'index.d.ts')]
const shipped = new Set()
while (queue.length) {
  const file = queue.shift()
  if (shipped.has(file)) continue
  const text = declarations.get(file)
  if (text === undefined) throw new Error(`no declaration emitted for ${relative(dist, file)}`)
  if (relative(emittedSrc, file).startsWith('..')) throw new Error(`the public types reach ${relative(join(dist, 'tsc'), file)}, outside the package: keep it out of the exported API`)
  shipped.add(file)
  // A declaration keeps the `.ts` of the source's imports; a user's TypeScript resolves `.js`.
  const out = text.replace(relativeImport, (_, lead, q, path) => {
    queue.push(join(dirname(file), `${path}.d.ts`))
    return `${lead}${q}${path}.js${q}`
  })
  put(relative(emittedSrc, file), out)
}
for (const name of readdirSync(dist)) if (!written.has(name)) rmSync(join(dist, name), { recursive: true, force: true })
console.log(`built ${relative(pkgDir, dist)}/: index.js and ${shipped.size} declaration files`)
