// The versions of pdfmake, PDFKit and fontkit these patches were written for, and the check that
// refuses to patch anything else. A patch wraps or replaces a method by name: after an upgrade
// that renames or drops it, the patch would do nothing (or break a render in a way no error
// names). So before anything is patched (installPatches, run as a render thread starts), every
// method a patch replaces or calls must be there, every package must be at the version below, and
// the PDFKit and fontkit the patches reach must be the copies pdfmake itself loads (a second,
// nested copy would leave pdfmake's untouched). Anything else throws one error that names the
// package, its installed version and each missing method (README.md: "After an upgrade").
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export type Dependency = 'pdfmake' | 'pdfkit' | 'fontkit'

/** Exactly the versions pinned in package.json; change them only with README.md's steps. */
export const PATCHED_FOR: Record<Dependency, string> = { pdfmake: '0.3.11', pdfkit: '0.19.1', fontkit: '2.0.4' }

/** What one patch needs of a package: the methods it replaces or calls on one object, or files it reads. */
export interface PatchTarget {
  dependency: Dependency
  /** How the error and README.md name the object, e.g. `StyleContextStack.prototype`. */
  owner: string
  /** The object itself (undefined when the package no longer has it where the patch looks). */
  object: unknown
  methods: readonly string[]
  /** Files of the package the patch relies on (absolute paths). */
  files?: readonly string[]
  /** The patch's file in this folder. */
  patch: string
}

export interface InstalledPackage {
  version: string
  /** The entry file the patches load. */
  entry: string
  /** The entry file of the same package as its user loads it (pdfmake's PDFKit, PDFKit's fontkit). */
  entryOfUser?: string
}

const require = createRequire(import.meta.url)

function packageVersion(name: string, entry: string): string {
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json')
    if (!existsSync(file)) continue
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string }
    if (pkg.name === name) return pkg.version ?? 'unknown'
  }
  return 'unknown'
}

/** The three packages as this process loads them. */
export function installedPackages(): Record<Dependency, InstalledPackage> {
  const entry = (name: string, from?: string) => require.resolve(name, from ? { paths: [from] } : undefined)
  const pdfmake = entry('pdfmake')
  const pdfkit = entry('pdfkit')
  const fontkit = entry('fontkit')
  return {
    pdfmake: { version: packageVersion('pdfmake', pdfmake), entry: pdfmake },
    pdfkit: { version: packageVersion('pdfkit', pdfkit), entry: pdfkit, entryOfUser: entry('pdfkit', dirname(pdfmake)) },
    fontkit: { version: packageVersion('fontkit', fontkit), entry: fontkit, entryOfUser: entry('fontkit', dirname(pdfkit)) },
  }
}

const USER: Record<Dependency, string> = { pdfmake: 'this service', pdfkit: 'pdfmake', fontkit: 'PDFKit' }

/** Throws PatchTargetError unless every target is there, at the version it was patched for. */
export function checkPatchTargets(targets: readonly PatchTarget[], installed: Record<Dependency, InstalledPackage> = installedPackages()): void {
  const problems: string[] = []
  const deps = [...new Set(targets.map((t) => t.dependency))]
  for (const dep of deps) {
    const pkg = installed[dep]
    if (pkg.version !== PATCHED_FOR[dep]) problems.push(`${dep} ${pkg.version} is installed; the patches were written for ${dep} ${PATCHED_FOR[dep]}`)
    if (pkg.entryOfUser !== undefined && pkg.entryOfUser !== pkg.entry) {
      problems.push(`${dep} ${pkg.version}: ${USER[dep]} loads ${pkg.entryOfUser}, but the patches change ${pkg.entry}`)
    }
  }
  for (const t of targets) {
    const version = `${t.dependency} ${installed[t.dependency].version}`
    if (t.object === undefined || t.object === null) {
      problems.push(`${version}: ${t.owner} is missing (patched by ${t.patch})`)
      continue
    }
    for (const m of t.methods) {
      if (typeof (t.object as Record<string, unknown>)[m] !== 'function') problems.push(`${version}: ${t.owner}.${m} is missing (patched by ${t.patch})`)
    }
    for (const f of t.files ?? []) if (!existsSync(f)) problems.push(`${version}: ${f} is missing (read by ${t.patch})`)
  }
  if (problems.length) throw new PatchTargetError(problems)
}

export class PatchTargetError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `The pdfmake/PDFKit/fontkit patches of src/invoice/pdf/patches/ do not fit the installed packages, so nothing is patched and no invoice renders ` +
        `(src/invoice/pdf/patches/README.md, "After an upgrade"):\n- ${problems.join('\n- ')}`,
    )
    this.name = 'PatchTargetError'
  }
}

/** A file inside a package, or undefined when the package no longer has it (the check then names it). */
export function requireInternal(req: NodeRequire, id: string): unknown {
  try {
    return req(id)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (err as Error).message.includes(`'${id}'`)) return undefined
    throw err
  }
}
