// The layering of docs/architecture.md ("Imports flow one way") as assertions, so that the next
// feature cannot break it silently: every import of every TypeScript file under src/, jobs/ and
// workers/ (static, export … from, dynamic import(), import('…') types, require) is read with the
// TypeScript parser and held against the rules below. Each failure names the importing file and
// line, the import as written and the file it reaches, and the rule. The rules are pure functions
// of an import graph, and the first part of this file checks each of them on small made-up graphs,
// so a rule that stopped catching its violation would fail here too.
//
// A violation that is known and left for later is excused by an entry of ALLOWED, which names it
// and says why; an entry that no longer excuses anything fails the test, so fixing the violation
// forces removing its entry.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

// ─── the import graph ──────────────────────────────────────────────────────────────────────────

/** One import of a file of this repository: `to` is the repository-relative path it reaches. */
interface Import {
  from: string
  to: string
  /** The module specifier as written. */
  specifier: string
  line: number
}

interface Graph {
  /** Every scanned file, repository-relative with forward slashes. */
  files: string[]
  /** Imports between files of the repository (packages and node: builtins are left out). */
  imports: Import[]
}

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** The application's code; scripts/ (developer tools and benchmarks) and test/ may import anything. */
const SCANNED = ['src', 'jobs', 'workers']
const SOURCE = /\.[cm]?tsx?$/

function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(posix.join(ROOT, dir)).sort()) {
    const path = posix.join(dir, name)
    if (statSync(posix.join(ROOT, path)).isDirectory()) out.push(...sourceFiles(path))
    else if (SOURCE.test(name) && !name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

/** The repository file a relative specifier names (`.js` written for a `.ts` file, a folder's index). */
function resolve(from: string, specifier: string): string {
  const path = posix.normalize(posix.join(posix.dirname(from), specifier))
  const candidates = [path, path.replace(/\.([cm]?)js$/, '.$1ts'), `${path}.ts`, `${path}/index.ts`]
  return candidates.find((c) => existsSync(posix.join(ROOT, c)) && statSync(posix.join(ROOT, c)).isFile()) ?? path
}

/** Every module specifier of one file, with its line: only string literals (a computed import() names no file). */
function specifiersOf(fileName: string, text: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const found: { specifier: string; line: number }[] = []
  const add = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 })
  }
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier)
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node.moduleReference.expression)
    else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) add(node.arguments[0])
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** The import graph of the application as it is on disk. */
function readGraph(): Graph {
  const files = SCANNED.flatMap(sourceFiles)
  const imports: Import[] = []
  for (const from of files) {
    for (const { specifier, line } of specifiersOf(from, readFileSync(posix.join(ROOT, from), 'utf8'))) {
      if (specifier.startsWith('.') || specifier.startsWith('/')) imports.push({ from, to: resolve(from, specifier), specifier, line })
    }
  }
  return { files, imports }
}

// ─── where each file stands ────────────────────────────────────────────────────────────────────

/** The layers, lowest first: a file may import its own layer's files and those of lower layers. */
type Layer = 'platform' | 'embedded' | 'domain' | 'registry' | 'jobs' | 'workers' | 'main' | 'console'
// The browser consoles stand apart from the server's chain (consoleApart), so their rank never decides.
const RANK: Record<Layer, number> = { platform: 0, embedded: 1, domain: 1, registry: 2, jobs: 3, workers: 4, main: 5, console: 0 }

const DOMAINS = ['invoice', 'flags', 'webhooks']
/** The web consoles' browser code (src/console/ui shared, one folder per console), bundled by esbuild for the browser. */
const CONSOLES = 'src/console/'
/** The embedded default (the children `npm start` runs): beside the kernel, for the start role alone. */
const EMBEDDED_HOMES = ['src/embedded/', 'src/platform/embedded/']
const REGISTRIES = ['src/services.ts', 'src/collections.ts', 'src/job-contracts.ts']
/** The CLI and its roles (src/README.md). */
const MAIN = ['src/main.ts', 'src/api-role.ts', 'src/worker-role.ts', 'src/serve.ts', 'src/shutdown.ts', 'src/role-urls.ts']
/** The file of the `start` role, the one role that runs the embedded default. */
const START_ROLE = 'src/api-role.ts'
const FLAG_ENGINE = 'src/flags/engine/'

/** A file's layer, and for a domain which one; null for a file that has no place (a new top-level file or folder). */
function placeOf(file: string): { layer: Layer; unit: string } | null {
  if (EMBEDDED_HOMES.some((h) => file.startsWith(h))) return { layer: 'embedded', unit: 'embedded' }
  if (file.startsWith(CONSOLES)) return { layer: 'console', unit: 'console' }
  if (file.startsWith('src/platform/')) return { layer: 'platform', unit: 'platform' }
  const domain = DOMAINS.find((d) => file.startsWith(`src/${d}/`))
  if (domain) return { layer: 'domain', unit: domain }
  if (REGISTRIES.includes(file)) return { layer: 'registry', unit: file }
  if (file.startsWith('jobs/')) return { layer: 'jobs', unit: 'jobs' }
  if (file.startsWith('workers/')) return { layer: 'workers', unit: 'workers' }
  if (MAIN.includes(file)) return { layer: 'main', unit: 'main' }
  return null
}

/**
 * Inside a domain the root is the request layer and each sub-folder a capability; imports run down
 * these levels (each may skip levels, never go back or sideways), as each domain's README says.
 * A sub-folder may import the root's shared files named here, never its routes, app, service or
 * indexes.
 */
const DOMAIN_LEVELS: Record<string, { levels: string[][]; rootShared: string[]; sideways?: [from: string, to: string][] }> = {
  flags: { levels: [['sdk', 'changes'], ['store'], ['engine']], rootShared: ['flag-schema.ts', 'job-contracts.ts', 'plan-limits.ts'] },
  invoice: { levels: [['batch', 'receive'], ['pdf'], ['einvoice'], ['store'], ['model']], rootShared: ['invoice-schema.ts', 'job-contracts.ts', 'pdf-response.ts'] },
  webhooks: {
    levels: [['forward', 'replay', 'search', 'signatures'], ['live'], ['store'], ['static']],
    rootShared: ['job-contracts.ts'],
    sideways: [['src/webhooks/replay/', 'src/webhooks/forward/outbound.ts']],
  },
}

// ─── the rules ─────────────────────────────────────────────────────────────────────────────────

interface Violation {
  rule: string
  file: string
  /** The file reached ('' for a rule about where a file stands). */
  to: string
  message: string
}

const RULE = {
  placed: 'every file has a place in the layering',
  cycles: 'no import cycles',
  upward: 'no upward imports (platform ← domains ← registries ← jobs ← workers ← main)',
  domains: 'a domain never imports another domain',
  platform: 'the platform imports no domain',
  insideDomain: "inside a domain, imports run down its README's chain of sub-folders",
  engine: 'the flag engine imports nothing outside itself',
  embeddedImporters: 'the embedded default is imported only by the start role',
  embeddedHome: 'the embedded default is not part of the platform kernel',
  consoleApart: 'the browser consoles import only each other, and no server code imports them',
  routerNames: 'each router export name is used by one module only',
  readmeTests: 'each folder README names the test files that guard it',
} as const

const said = (i: Import) => `${i.from}:${i.line} imports '${i.specifier}' (${i.to})`
const violation = (rule: string, i: Import, why = ''): Violation => ({ rule, file: i.from, to: i.to, message: `${said(i)}${why ? `: ${why}` : ''} — rule: ${rule}` })

function unplaced(g: Graph): Violation[] {
  const out: Violation[] = []
  for (const file of g.files) {
    if (!placeOf(file)) out.push({ rule: RULE.placed, file, to: '', message: `${file} has no layer: add it to test/architecture.test.ts (placeOf) and docs/architecture.md — rule: ${RULE.placed}` })
  }
  for (const i of g.imports) {
    if (!placeOf(i.to)) out.push(violation(RULE.placed, i, 'it reaches outside the application (src/, jobs/, workers/)'))
  }
  return out
}

/** Every import that lies on a cycle (Tarjan's strongly connected components), with the cycle it closes. */
function cycles(g: Graph): Violation[] {
  const next = new Map<string, Import[]>()
  for (const i of g.imports) next.set(i.from, [...(next.get(i.from) ?? []), i])
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const component = new Map<string, number>()
  let counter = 0
  let components = 0
  const connect = (v: string) => {
    index.set(v, counter)
    low.set(v, counter++)
    stack.push(v)
    onStack.add(v)
    for (const { to: w } of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.set(w, components)
      } while (w !== v)
      components++
    }
  }
  for (const f of new Set([...g.files, ...g.imports.map((i) => i.from)])) if (!index.has(f)) connect(f)
  // The way back from an import's target to its importer, inside their component.
  const pathBack = (from: string, to: string): string[] => {
    const seen = new Map<string, string>([[from, '']])
    const queue = [from]
    while (queue.length) {
      const v = queue.shift()!
      if (v === to) break
      for (const { to: w } of next.get(v) ?? []) {
        if (!seen.has(w) && component.get(w) === component.get(from)) {
          seen.set(w, v)
          queue.push(w)
        }
      }
    }
    const path = [to]
    while (path[0] !== from) path.unshift(seen.get(path[0])!)
    return path
  }
  return g.imports
    .filter((i) => component.get(i.from) === component.get(i.to))
    .map((i) => violation(RULE.cycles, i, `the cycle ${[i.from, ...pathBack(i.to, i.from)].join(' → ')}`))
}

function upward(g: Graph): Violation[] {
  return g.imports.flatMap((i) => {
    const from = placeOf(i.from)
    const to = placeOf(i.to)
    if (!from || !to || RANK[to.layer] <= RANK[from.layer]) return []
    return [violation(RULE.upward, i, `${from.layer} imports ${to.layer}`)]
  })
}

function domainsApart(g: Graph): Violation[] {
  return g.imports.flatMap((i) => {
    const from = placeOf(i.from)
    const to = placeOf(i.to)
    if (from?.layer !== 'domain' || to?.layer !== 'domain' || from.unit === to.unit) return []
    return [violation(RULE.domains, i, `${from.unit} imports ${to.unit}: what two domains share belongs to the platform`)]
  })
}

function platformImportsNoDomain(g: Graph): Violation[] {
  return g.imports.flatMap((i) => {
    const from = placeOf(i.from)
    return (from?.layer === 'platform' || from?.layer === 'embedded') && placeOf(i.to)?.layer === 'domain' ? [violation(RULE.platform, i)] : []
  })
}

/** Where a file stands inside its domain: the root (level -1) or a sub-folder's level; null outside domains or in an undeclared sub-folder. */
function levelOf(file: string): { domain: string; folder: string; level: number } | null {
  const domain = DOMAINS.find((d) => file.startsWith(`src/${d}/`))
  if (!domain) return null
  const rest = file.slice(`src/${domain}/`.length).split('/')
  if (rest.length === 1) return { domain, folder: '', level: -1 }
  const level = DOMAIN_LEVELS[domain]?.levels.findIndex((l) => l.includes(rest[0])) ?? -1
  return level < 0 ? null : { domain, folder: rest[0], level }
}

function insideDomains(g: Graph): Violation[] {
  const out: Violation[] = []
  for (const file of g.files) {
    const domain = DOMAINS.find((d) => file.startsWith(`src/${d}/`))
    if (domain && !levelOf(file)) {
      out.push({ rule: RULE.insideDomain, file, to: '', message: `${file} is in a sub-folder that src/${domain}/README.md and DOMAIN_LEVELS do not place — rule: ${RULE.insideDomain}` })
    }
  }
  for (const i of g.imports) {
    const from = levelOf(i.from)
    const to = levelOf(i.to)
    if (!from || !to || from.domain !== to.domain || from.folder === to.folder || from.level === -1) continue
    const rules = DOMAIN_LEVELS[from.domain]
    if (to.level === -1) {
      if (!rules.rootShared.includes(i.to.slice(`src/${to.domain}/`.length))) out.push(violation(RULE.insideDomain, i, `${from.folder}/ may import only the root's ${rules.rootShared.join(', ')}`))
    } else if (to.level <= from.level && !rules.sideways?.some(([f, t]) => i.from.startsWith(f) && i.to === t)) {
      out.push(violation(RULE.insideDomain, i, `${from.folder}/ stands above ${to.folder}/ or beside it`))
    }
  }
  return out
}

function engineAlone(g: Graph): Violation[] {
  return g.imports.flatMap((i) => (i.from.startsWith(FLAG_ENGINE) && !i.to.startsWith(FLAG_ENGINE) ? [violation(RULE.engine, i, 'the OpenFeature provider package ships the engine on its own')] : []))
}

function embeddedImporters(g: Graph): Violation[] {
  return g.imports.flatMap((i) => {
    if (placeOf(i.to)?.layer !== 'embedded' || placeOf(i.from)?.layer === 'embedded' || i.from === START_ROLE) return []
    return [violation(RULE.embeddedImporters, i, `only ${START_ROLE} may`)]
  })
}

function consoleApart(g: Graph): Violation[] {
  return g.imports.flatMap((i) => {
    const fromConsole = i.from.startsWith(CONSOLES)
    if (fromConsole === i.to.startsWith(CONSOLES)) return []
    return [violation(RULE.consoleApart, i, fromConsole ? 'a console is bundled for the browser: server code would be bundled with it' : 'the server builds the consoles by path and never loads their code')]
  })
}

function embeddedHome(g: Graph): Violation[] {
  return g.files
    .filter((f) => placeOf(f)?.layer === 'embedded' && f.startsWith('src/platform/'))
    .map((file) => ({ rule: RULE.embeddedHome, file, to: '', message: `${file} is the embedded default inside src/platform/ — rule: ${RULE.embeddedHome}` }))
}

/** Router factories exported under the same name by two modules (read from each file's exports). */
function routerNames(exportsOf: Map<string, string[]>): Violation[] {
  const owners = new Map<string, string[]>()
  for (const [file, names] of exportsOf) for (const n of names) if (/Router$/.test(n)) owners.set(n, [...(owners.get(n) ?? []), file])
  return [...owners].flatMap(([name, files]) =>
    files.length < 2 ? [] : files.map((file) => ({ rule: RULE.routerNames, file, to: '', message: `${file} exports ${name}, as ${files.filter((f) => f !== file).join(', ')} does — rule: ${RULE.routerNames}` })),
  )
}

/** The names a file exports (declarations and export lists). */
function exportedNames(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const names: string[] = []
  for (const s of source.statements) {
    const exported = ts.canHaveModifiers(s) && ts.getModifiers(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    if (exported && (ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s)) && s.name) names.push(s.name.text)
    if (exported && ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text)
    if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)) for (const e of s.exportClause.elements) names.push(e.name.text)
  }
  return names
}

/** Where a README names its tests: a paragraph that opens with **Tests**. */
const TESTS_PARAGRAPH = /^\*\*Tests\*\*[^]*?(?=\n[ \t]*\n|(?![^]))/m
const TEST_NAME = /`(test\/[^`\s]*\.test\.ts)`/g

/** Folder READMEs without a **Tests** paragraph, or naming a test file (or pattern) that matches none. */
function readmeTests(readmes: Map<string, string>, testFiles: string[]): Violation[] {
  const out: Violation[] = []
  const fail = (file: string, why: string) => out.push({ rule: RULE.readmeTests, file, to: '', message: `${file} ${why} — rule: ${RULE.readmeTests}` })
  for (const [file, text] of readmes) {
    const names = [...(text.match(TESTS_PARAGRAPH)?.[0] ?? '').matchAll(TEST_NAME)].map((m) => m[1])
    if (!names.length) fail(file, 'has no **Tests** paragraph naming a `test/….test.ts`')
    for (const name of names) {
      const pattern = new RegExp(`^${name.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`)
      if (!testFiles.some((t) => pattern.test(t))) fail(file, `names ${name}, which is no test file`)
    }
  }
  return out
}

function readmes(): Map<string, string> {
  const found = new Map<string, string>()
  const walk = (dir: string) => {
    for (const name of readdirSync(posix.join(ROOT, dir)).sort()) {
      const path = posix.join(dir, name)
      if (statSync(posix.join(ROOT, path)).isDirectory()) walk(path)
      else if (name === 'README.md') found.set(path, readFileSync(posix.join(ROOT, path), 'utf8'))
    }
  }
  SCANNED.forEach(walk)
  return found
}

const GRAPH_RULES: [rule: string, check: (g: Graph) => Violation[]][] = [
  [RULE.placed, unplaced],
  [RULE.cycles, cycles],
  [RULE.upward, upward],
  [RULE.domains, domainsApart],
  [RULE.platform, platformImportsNoDomain],
  [RULE.insideDomain, insideDomains],
  [RULE.engine, engineAlone],
  [RULE.embeddedImporters, embeddedImporters],
  [RULE.embeddedHome, embeddedHome],
  [RULE.consoleApart, consoleApart],
]

// ─── known violations, left for later ──────────────────────────────────────────────────────────

interface Allowed {
  rule: string
  /** The importing file, or a folder (ending in /) for a rule about where files stand. */
  file: string
  /** The file it reaches ('' for a rule about where files stand). */
  to: string
  why: string
}

/**
 * Known violations, each excused by name until it is fixed (the last test fails once an entry
 * excuses nothing, so a fixed violation takes its entry with it). None today.
 */
const ALLOWED: Allowed[] = []

const excuses = (a: Allowed, v: Violation) => a.rule === v.rule && a.to === v.to && (a.file.endsWith('/') ? v.file.startsWith(a.file) : v.file === a.file)

// ─── tests ─────────────────────────────────────────────────────────────────────────────────────

/** A made-up graph: each edge 'a.ts -> b.ts', files are every end named. */
function graph(...edges: string[]): Graph {
  const imports = edges.map((e, n) => {
    const [from, to] = e.split(' -> ')
    return { from, to, specifier: `./${posix.basename(to)}`, line: n + 1 }
  })
  return { files: [...new Set(imports.flatMap((i) => [i.from, i.to]))], imports }
}
const messages = (vs: Violation[]) => vs.map((v) => v.message)

describe('architecture: the rules, on made-up import graphs', () => {
  it('reads every kind of import with its line, and nothing from comments or strings', () => {
    const text = [
      "import { a } from './a.ts'",
      "import type { B } from '../b.ts'",
      "export { c } from './c.ts'",
      "export * from './d.ts'",
      "const e = await import('./e.ts')",
      "type F = typeof import('./f.ts')",
      "const g = require('./g.cjs')",
      "// import { no } from './comment.ts'",
      "const s = \"import { no } from './string.ts'\"",
      'const h = await import(`./${name}.ts`)',
      "import 'koa'",
    ].join('\n')
    assert.deepEqual(specifiersOf('x.ts', text), [
      { specifier: './a.ts', line: 1 },
      { specifier: '../b.ts', line: 2 },
      { specifier: './c.ts', line: 3 },
      { specifier: './d.ts', line: 4 },
      { specifier: './e.ts', line: 5 },
      { specifier: './f.ts', line: 6 },
      { specifier: './g.cjs', line: 7 },
      { specifier: 'koa', line: 11 },
    ])
  })

  it('places every kind of file, and no stranger', () => {
    assert.equal(placeOf('src/platform/clock.ts')?.layer, 'platform')
    assert.equal(placeOf('src/platform/embedded/index.ts')?.layer, 'embedded')
    assert.equal(placeOf('src/embedded/index.ts')?.layer, 'embedded')
    assert.deepEqual(placeOf('src/flags/engine/rules.ts'), { layer: 'domain', unit: 'flags' })
    assert.equal(placeOf('src/job-contracts.ts')?.layer, 'registry')
    assert.equal(placeOf('jobs/index.ts')?.layer, 'jobs')
    assert.equal(placeOf('workers/main.ts')?.layer, 'workers')
    assert.equal(placeOf('src/api-role.ts')?.layer, 'main')
    assert.equal(placeOf('src/billing/plans.ts'), null)
    assert.equal(placeOf('scripts/bench/flags.ts'), null)
    assert.deepEqual(messages(unplaced(graph('src/platform/a.ts -> src/helpers.ts'))), [
      'src/helpers.ts has no layer: add it to test/architecture.test.ts (placeOf) and docs/architecture.md — rule: every file has a place in the layering',
      `src/platform/a.ts:1 imports './helpers.ts' (src/helpers.ts): it reaches outside the application (src/, jobs/, workers/) — rule: ${RULE.placed}`,
    ])
  })

  it('finds a cycle, names each import on it and the way round', () => {
    const g = graph('src/platform/a.ts -> src/platform/b.ts', 'src/platform/b.ts -> src/platform/c.ts', 'src/platform/c.ts -> src/platform/a.ts', 'src/platform/c.ts -> src/platform/d.ts')
    assert.deepEqual(messages(cycles(g)), [
      `src/platform/a.ts:1 imports './b.ts' (src/platform/b.ts): the cycle src/platform/a.ts → src/platform/b.ts → src/platform/c.ts → src/platform/a.ts — rule: ${RULE.cycles}`,
      `src/platform/b.ts:2 imports './c.ts' (src/platform/c.ts): the cycle src/platform/b.ts → src/platform/c.ts → src/platform/a.ts → src/platform/b.ts — rule: ${RULE.cycles}`,
      `src/platform/c.ts:3 imports './a.ts' (src/platform/a.ts): the cycle src/platform/c.ts → src/platform/a.ts → src/platform/b.ts → src/platform/c.ts — rule: ${RULE.cycles}`,
    ])
    assert.deepEqual(cycles(graph('src/platform/a.ts -> src/platform/b.ts', 'src/platform/a.ts -> src/platform/c.ts', 'src/platform/b.ts -> src/platform/c.ts')), [])
    assert.equal(cycles(graph('src/platform/a.ts -> src/platform/a.ts')).length, 1)
  })

  it('refuses an import up the layers, and allows one down or level', () => {
    assert.deepEqual(messages(upward(graph('src/invoice/x.ts -> jobs/invoice-render.ts'))), [
      `src/invoice/x.ts:1 imports './invoice-render.ts' (jobs/invoice-render.ts): domain imports jobs — rule: ${RULE.upward}`,
    ])
    for (const [from, to] of [
      ['src/platform/x.ts', 'src/flags/x.ts'],
      ['src/flags/x.ts', 'src/job-contracts.ts'],
      ['jobs/x.ts', 'workers/main.ts'],
      ['workers/main.ts', 'src/serve.ts'],
      ['src/job-contracts.ts', 'jobs/index.ts'],
    ]) assert.equal(upward(graph(`${from} -> ${to}`)).length, 1, `${from} -> ${to}`)
    assert.deepEqual(upward(graph('src/main.ts -> src/api-role.ts', 'src/api-role.ts -> workers/main.ts', 'workers/main.ts -> jobs/index.ts', 'jobs/index.ts -> src/job-contracts.ts', 'src/job-contracts.ts -> src/flags/job-contracts.ts', 'src/flags/x.ts -> src/platform/clock.ts')), [])
  })

  it('refuses a domain importing another', () => {
    assert.deepEqual(messages(domainsApart(graph('src/webhooks/x.ts -> src/flags/y.ts', 'src/webhooks/x.ts -> src/webhooks/y.ts'))), [
      `src/webhooks/x.ts:1 imports './y.ts' (src/flags/y.ts): webhooks imports flags: what two domains share belongs to the platform — rule: ${RULE.domains}`,
    ])
  })

  it('refuses the platform (and the embedded default) importing a domain', () => {
    const g = graph('src/platform/http/x.ts -> src/invoice/y.ts', 'src/platform/embedded/x.ts -> src/webhooks/y.ts', 'src/platform/x.ts -> src/platform/y.ts')
    assert.deepEqual(
      platformImportsNoDomain(g).map((v) => v.file),
      ['src/platform/http/x.ts', 'src/platform/embedded/x.ts'],
    )
  })

  it("holds a domain's sub-folders to its README's chain", () => {
    const g = graph(
      'src/flags/x-routes.ts -> src/flags/sdk/a.ts', // root → anything
      'src/flags/sdk/a.ts -> src/flags/engine/b.ts', // skips a level: fine
      'src/flags/sdk/a.ts -> src/flags/flag-schema.ts', // a shared root file
      'src/flags/store/a.ts -> src/flags/changes/b.ts', // back up
      'src/flags/sdk/a.ts -> src/flags/changes/b.ts', // sideways
      'src/flags/engine/a.ts -> src/flags/flag-routes.ts', // the root's routes
      'src/webhooks/replay/a.ts -> src/webhooks/forward/outbound.ts', // the one sideways import the README allows
      'src/webhooks/replay/a.ts -> src/webhooks/forward/forward.ts',
      'src/invoice/cache/a.ts -> src/invoice/model/b.ts', // a folder of no level
    )
    assert.deepEqual(messages(insideDomains(g)), [
      `src/invoice/cache/a.ts is in a sub-folder that src/invoice/README.md and DOMAIN_LEVELS do not place — rule: ${RULE.insideDomain}`,
      `src/flags/store/a.ts:4 imports './b.ts' (src/flags/changes/b.ts): store/ stands above changes/ or beside it — rule: ${RULE.insideDomain}`,
      `src/flags/sdk/a.ts:5 imports './b.ts' (src/flags/changes/b.ts): sdk/ stands above changes/ or beside it — rule: ${RULE.insideDomain}`,
      `src/flags/engine/a.ts:6 imports './flag-routes.ts' (src/flags/flag-routes.ts): engine/ may import only the root's flag-schema.ts, job-contracts.ts, plan-limits.ts — rule: ${RULE.insideDomain}`,
      `src/webhooks/replay/a.ts:8 imports './forward.ts' (src/webhooks/forward/forward.ts): replay/ stands above forward/ or beside it — rule: ${RULE.insideDomain}`,
    ])
  })

  it('keeps the flag engine to itself', () => {
    assert.deepEqual(messages(engineAlone(graph('src/flags/engine/a.ts -> src/flags/engine/b.ts', 'src/flags/engine/a.ts -> src/flags/store/c.ts'))), [
      `src/flags/engine/a.ts:2 imports './c.ts' (src/flags/store/c.ts): the OpenFeature provider package ships the engine on its own — rule: ${RULE.engine}`,
    ])
  })

  it('keeps the browser consoles apart from the server code, both ways', () => {
    const g = graph('src/console/flags/a.tsx -> src/console/ui/b.tsx', 'src/console/flags/a.tsx -> src/flags/engine/rules.ts', 'src/flags/app.ts -> src/console/flags/a.tsx')
    assert.deepEqual(consoleApart(g).map((v) => `${v.file} -> ${v.to}`), ['src/console/flags/a.tsx -> src/flags/engine/rules.ts', 'src/flags/app.ts -> src/console/flags/a.tsx'])
    assert.equal(placeOf('src/console/ui/api.ts')?.layer, 'console')
  })

  it('lets only the start role import the embedded default, wherever it lives', () => {
    const g = graph(
      'src/api-role.ts -> src/embedded/index.ts',
      'src/embedded/index.ts -> src/embedded/redis.ts',
      'src/embedded/index.ts -> src/platform/logger.ts',
      'src/worker-role.ts -> src/embedded/index.ts',
      'src/platform/ops/x.ts -> src/platform/embedded/y.ts',
    )
    assert.deepEqual(embeddedImporters(g).map((v) => v.file), ['src/worker-role.ts', 'src/platform/ops/x.ts'])
    assert.deepEqual(embeddedHome(g).map((v) => v.file), ['src/platform/embedded/y.ts'])
  })

  it('refuses two modules exporting one router name', () => {
    const exportsOf = new Map([
      ['src/flags/a-routes.ts', exportedNames('a.ts', 'export function usageRouter() {}\nexport const X = 1')],
      ['src/flags/sdk/b-routes.ts', exportedNames('b.ts', 'function r() {}\nexport { r as usageRouter }')],
      ['src/flags/c-routes.ts', exportedNames('c.ts', 'export const flagsRouter = () => 1')],
    ])
    assert.deepEqual(messages(routerNames(exportsOf)), [
      `src/flags/a-routes.ts exports usageRouter, as src/flags/sdk/b-routes.ts does — rule: ${RULE.routerNames}`,
      `src/flags/sdk/b-routes.ts exports usageRouter, as src/flags/a-routes.ts does — rule: ${RULE.routerNames}`,
    ])
  })

  it('wants a **Tests** paragraph in each README, naming test files that exist', () => {
    const tests = ['test/flags-api.test.ts', 'test/flags-rules.test.ts']
    const docs = new Map([
      ['src/flags/README.md', '# flags\n\n**Tests**: `test/flags-api.test.ts` (the API),\nand every `test/flags-*.test.ts`.\n'],
      ['src/flags/store/README.md', '# store\n\nSee `test/flags-api.test.ts`.\n'],
      ['src/flags/sdk/README.md', '**Tests**: `test/flags-sdk.test.ts`, `test/ops-*.test.ts`\n\nand `test/flags-api.test.ts` after the paragraph'],
    ])
    assert.deepEqual(messages(readmeTests(docs, tests)), [
      `src/flags/store/README.md has no **Tests** paragraph naming a \`test/….test.ts\` — rule: ${RULE.readmeTests}`,
      `src/flags/sdk/README.md names test/flags-sdk.test.ts, which is no test file — rule: ${RULE.readmeTests}`,
      `src/flags/sdk/README.md names test/ops-*.test.ts, which is no test file — rule: ${RULE.readmeTests}`,
    ])
  })

  it('excuses exactly what an allow-list entry names', () => {
    const engine: Allowed = { rule: RULE.engine, file: 'src/flags/engine/operators.ts', to: 'src/platform/clock.ts', why: 'an example' }
    const home: Allowed = { rule: RULE.embeddedHome, file: 'src/platform/embedded/', to: '', why: 'an example' }
    const v = engineAlone(graph('src/flags/engine/operators.ts -> src/platform/clock.ts', 'src/flags/engine/operators.ts -> src/platform/ids.ts'))
    assert.deepEqual(v.map((x) => excuses(engine, x)), [true, false])
    assert.equal(excuses(home, embeddedHome(graph('src/api-role.ts -> src/platform/embedded/index.ts'))[0]), true)
  })
})

describe('architecture: the application', () => {
  const g = readGraph()
  const found = new Map(GRAPH_RULES.map(([rule, check]) => [rule, check(g)]))
  found.set(RULE.readmeTests, readmeTests(readmes(), readdirSync(posix.join(ROOT, 'test')).map((f) => `test/${f}`)))

  it('reads the whole application', () => {
    assert.ok(g.files.length > 200, `only ${g.files.length} files read`)
    assert.ok(g.imports.length > 1000, `only ${g.imports.length} imports read`)
    assert.ok(g.imports.some((i) => i.from === 'src/main.ts' && i.to === 'src/api-role.ts'), 'the dynamic import of the start role was not read')
  })

  for (const [rule] of GRAPH_RULES) {
    it(rule, () => {
      const left = found.get(rule)!.filter((v) => !ALLOWED.some((a) => excuses(a, v)))
      assert.equal(left.length, 0, `\n${messages(left).join('\n')}`)
    })
  }

  it(RULE.routerNames, () => {
    const exportsOf = new Map(g.files.map((f) => [f, exportedNames(f, readFileSync(posix.join(ROOT, f), 'utf8'))]))
    const left = routerNames(exportsOf)
    assert.equal(left.length, 0, `\n${messages(left).join('\n')}`)
  })

  it(RULE.readmeTests, () => {
    const left = found.get(RULE.readmeTests)!.filter((v) => !ALLOWED.some((a) => excuses(a, v)))
    assert.equal(left.length, 0, `\n${messages(left).join('\n')}`)
  })

  it('every allow-list entry still excuses a violation (remove it once its violation is fixed)', () => {
    const stale = ALLOWED.filter((a) => !(found.get(a.rule) ?? []).some((v) => excuses(a, v)))
    const said = stale.map((a) => `${a.file}${a.to ? ` → ${a.to}` : ''} (${a.rule}): nothing to excuse any more, remove its entry from ALLOWED`)
    assert.equal(stale.length, 0, `\n${said.join('\n')}`)
  })
})
