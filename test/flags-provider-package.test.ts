// The in-process provider as a user gets it: `npm pack` of packages/openfeature-provider (its
// prepack builds dist/), the tarball installed with the OpenFeature SDK into an empty project
// under the system's temporary folder — where nothing of this repository resolves — and there an
// ES module evaluates flags against a running flag service, and TypeScript (this repository's
// compiler, nothing else of it) checks a program against the installed declarations.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative, sep } from 'node:path'
import { promisify } from 'node:util'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'

const run = promisify(execFile)
const REPO = realpathSync(process.cwd())
const PACKAGE_DIR = join(REPO, 'packages', 'openfeature-provider')
const version = (name: string) => JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')).version as string

/**
 * The environment of a user's shell: no module paths or loaders of this test run (mocha's
 * `--import tsx`), no variables an enclosing `npm test` sets for this repository's package.
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_OPTIONS' || k === 'NODE_PATH' || k === 'INIT_CWD' || /^npm_(package|lifecycle|config_(workspace|prefix|global))/i.test(k)) continue
    env[k] = v
  }
  return env
}

const SCRIPT = `import { OpenFeature } from '@openfeature/server-sdk'
import { QueueworksProvider } from '@queueworks/openfeature-provider'
const provider = new QueueworksProvider({ url: process.env.FLAGS_URL, serverKey: process.env.FLAGS_SERVER_KEY, usage: false })
await OpenFeature.setProviderAndWait(provider)
const client = OpenFeature.getClient()
const pick = (d) => ({ value: d.value, reason: d.reason, variant: d.variant, errorCode: d.errorCode })
const out = {
  resolved: import.meta.resolve('@queueworks/openfeature-provider'),
  de: pick(await client.getBooleanDetails('new-checkout', false, { targetingKey: 'u-42', country: 'DE' })),
  fr: pick(await client.getBooleanDetails('new-checkout', true, { targetingKey: 'u-43', country: 'FR' })),
  limits: await client.getObjectValue('limits', {}, { plan: 'pro' }),
  missing: pick(await client.getBooleanDetails('no-such-flag', true, {})),
  rejected: await provider.resolveBooleanEvaluation('no-such-flag', true, {}).then(() => 'resolved', (e) => e.code),
  source: provider.syncStatus().source,
}
let repoModule
try {
  await import('koa')
  repoModule = 'resolved'
} catch (err) {
  repoModule = err.code
}
out.repoModule = repoModule
await OpenFeature.close()
console.log(JSON.stringify(out))
`

const TYPED = `import { OpenFeature } from '@openfeature/server-sdk'
import { QueueworksProvider, type QueueworksProviderOptions, type SyncStatus, type UsageOptions } from '@queueworks/openfeature-provider'
const usage: UsageOptions = { flushIntervalMs: 30_000 }
const options: QueueworksProviderOptions = { url: 'http://localhost:3002', serverKey: 'fbsrv_x', cacheFile: 'flags.json', usage }
const provider = new QueueworksProvider(options)
await OpenFeature.setProviderAndWait(provider)
const status: SyncStatus = provider.syncStatus()
const staleness: number | null = status.stalenessMs
const on: boolean = await OpenFeature.getClient().getBooleanValue('new-checkout', false, { country: 'DE' })
const details = await provider.resolveStringEvaluation('layout', 'a', {})
const variant: string | undefined = details.variant
// The declarations are real types, not any: each of these is an error.
// @ts-expect-error serverKey is required
new QueueworksProvider({ url: 'http://localhost:3002' })
// @ts-expect-error a flag key is a string
void provider.resolveBooleanEvaluation(42, false, {})
// @ts-expect-error the status has no such field
void status.nonsense
console.log(staleness, on, variant)
`

describe('flags: the provider package, packed and installed into an empty project', function () {
  this.timeout(120_000)
  let sys: TestSystem
  let t: FlagsAccount
  let serverKey: string
  let work: string
  let project: string
  let tarball: string
  let packed: { path: string }[]

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    t = await flagsAccount(sys, 'business')
    const flags = [
      { key: 'new-checkout', type: 'boolean', enabled: true, default_value: false, rules: [{ conditions: [{ attribute: 'country', operator: 'in', value: ['DE', 'AT'] }], value: true }] },
      { key: 'limits', type: 'object', enabled: true, default_value: { max: 3 }, rules: [{ conditions: [{ attribute: 'plan', operator: 'eq', value: 'pro' }], value: { max: 10 } }] },
    ]
    for (const f of flags) assert.equal((await post(`${t.project}/flags`, f, { key: t.apiKey })).status, 201)
    serverKey = (await post(`${t.project}/environments/production/server-key/rotate`, undefined, { key: t.apiKey })).json.server_key

    work = realpathSync(mkdtempSync(join(tmpdir(), 'qw-provider-package-')))
    assert.ok(relative(REPO, work).startsWith(`..${sep}`), `${work} must lie outside the repository`)
    // Packing runs the package's prepack (the build): dist/ from the sources of this checkout.
    const pack = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: PACKAGE_DIR, env: userEnv(), maxBuffer: 16 << 20 })
    // The build's own lines come first; npm's JSON starts on a line of its own.
    const info = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[/m)))[0]
    tarball = join(work, info.filename)
    packed = info.files
    project = join(work, 'app')
    mkdirSync(project)
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'scratch-app', version: '1.0.0', private: true, type: 'module' }))
    // The SDK and Node's types at the versions this repository uses, so the npm cache serves them.
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball, `@openfeature/server-sdk@${version('@openfeature/server-sdk')}`, `@types/node@${version('@types/node')}`],
      { cwd: project, env: userEnv(), maxBuffer: 16 << 20 },
    )
  })
  after(async () => {
    await sys?.stop()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('the tarball holds the built package only: dist/ (the engine bundled in), its declarations, README, package.json', () => {
    const files = packed.map((f) => f.path).sort()
    assert.deepEqual(files.filter((f) => !f.startsWith('dist/')), ['README.md', 'package.json'])
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'), files.join(', '))
    const installed = join(project, 'node_modules', '@queueworks', 'openfeature-provider')
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    assert.deepEqual(manifest.exports, { '.': { types: './dist/index.d.ts', default: './dist/index.js' } })
    assert.equal(manifest.devDependencies, undefined)
    // Nothing points back into the repository: every relative import stays in dist/ (the
    // bundle's comments name the engine's source files; no import does), no path of this checkout.
    assert.ok(files.some((f) => f.endsWith('.d.ts') && f !== 'dist/index.d.ts'), 'declarations besides the entry point')
    for (const f of files.filter((f) => f.startsWith('dist/'))) {
      const text = readFileSync(join(installed, f), 'utf8')
      const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g)].map((m) => m[2]!)
      if (f === 'dist/index.js') assert.ok(specifiers.includes('@openfeature/server-sdk') && specifiers.includes('semver'), specifiers.join(', '))
      for (const s of specifiers) assert.ok(s.startsWith('./') ? !s.includes('..') : !s.startsWith('.') && !s.startsWith('/'), `${f} imports ${s}`)
      assert.equal(text.includes(REPO), false, `${f} names ${REPO}`)
    }
  })

  it('an ES module of the scratch project evaluates flags against the service, from the installed package', async () => {
    const script = join(project, 'check.mjs')
    writeFileSync(script, SCRIPT)
    const { stdout } = await run(process.execPath, [script], { cwd: project, env: { ...userEnv(), FLAGS_URL: sys.url.flags, FLAGS_SERVER_KEY: serverKey }, timeout: 60_000 })
    const out = JSON.parse(stdout.trim().split('\n').pop()!)
    assert.equal(out.resolved, `file://${join(project, 'node_modules', '@queueworks', 'openfeature-provider', 'dist', 'index.js')}`)
    assert.deepEqual(out.de, { value: true, reason: 'TARGETING_MATCH', variant: 'rule-0' })
    assert.deepEqual(out.fr, { value: false, reason: 'DEFAULT', variant: 'default' })
    assert.deepEqual(out.limits, { max: 10 })
    assert.deepEqual(out.missing, { value: true, reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' })
    assert.equal(out.rejected, 'FLAG_NOT_FOUND')
    assert.equal(out.source, 'service')
    // The scratch project reaches none of this repository's modules.
    assert.equal(out.repoModule, 'ERR_MODULE_NOT_FOUND')
  })

  it('TypeScript checks a program against the installed declarations (strict, library files checked too)', async () => {
    writeFileSync(join(project, 'check.ts'), TYPED)
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['check.ts'] }),
    )
    const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc')
    const result = await run(process.execPath, [tsc, '-p', project, '--listFilesOnly'], { cwd: project, env: userEnv() }).catch((err) => err)
    assert.equal(result.code ?? 0, 0, `${result.stdout}${result.stderr}`)
    const listed = (result.stdout as string).trim().split('\n')
    // Every file it read is the scratch project's, or the compiler's own library.
    const compilerLib = join(REPO, 'node_modules', 'typescript', 'lib')
    assert.deepEqual(listed.filter((f) => !f.startsWith(project + sep) && !f.startsWith(compilerLib + sep)), [])
    assert.ok(listed.includes(join(project, 'node_modules', '@queueworks', 'openfeature-provider', 'dist', 'provider.d.ts')), listed.join('\n'))
    const check = await run(process.execPath, [tsc, '-p', project], { cwd: project, env: userEnv() }).catch((err) => err)
    assert.equal(check.code ?? 0, 0, `${check.stdout}${check.stderr}`)
  })
})
