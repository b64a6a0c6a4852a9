// The patches of pdfmake's, PDFKit's and fontkit's internals (src/invoice/pdf/patches/) are
// installed only after a check: the packages at exactly the versions package.json pins, one copy
// of each, every method a patch replaces or calls present. Here the check passes on what is
// installed, and fails loudly — naming the package, its version and what is missing — on an
// object that lacks a patched method, another version, a second copy, and in a render thread's
// start where pdfmake has lost a patched method (its renders fail with that message, and nothing
// is patched).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { Piscina } from 'piscina'
import { installPatches, PATCH_TARGETS } from '../src/invoice/pdf/patches/install-patches.ts'
import { checkPatchTargets, installedPackages, PATCHED_FOR, PatchTargetError, type Dependency, type PatchTarget } from '../src/invoice/pdf/patches/patched-versions.ts'

const require = createRequire(import.meta.url)
const DEPS: Dependency[] = ['pdfmake', 'pdfkit', 'fontkit']

/** The error checkPatchTargets throws for these targets (fails the test when it throws none). */
function failure(targets: readonly PatchTarget[], installed = installedPackages()): PatchTargetError {
  try {
    checkPatchTargets(targets, installed)
  } catch (err) {
    assert.ok(err instanceof PatchTargetError, String(err))
    assert.match(err.message, /src\/invoice\/pdf\/patches\/README\.md, "After an upgrade"/)
    return err
  }
  assert.fail('the check passed')
}

describe('invoice PDF patches: pinned versions, checked before anything is patched', () => {
  it('package.json and its lock pin pdfmake, pdfkit and fontkit at exactly the versions patched for, and those are installed, one copy each', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> }
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version?: string; dependencies?: Record<string, string> }> }
    const installed = installedPackages()
    for (const dep of DEPS) {
      assert.equal(pkg.dependencies[dep], PATCHED_FOR[dep], `package.json pins ${dep}`)
      assert.equal(lock.packages['']!.dependencies![dep], PATCHED_FOR[dep], `package-lock.json pins ${dep}`)
      assert.equal(lock.packages[`node_modules/${dep}`]!.version, PATCHED_FOR[dep], `package-lock.json installs ${dep}`)
      assert.equal(installed[dep].version, PATCHED_FOR[dep], `${dep} installed`)
    }
    assert.equal(installed.pdfkit.entryOfUser, installed.pdfkit.entry, 'pdfmake loads the PDFKit the patches change')
    assert.equal(installed.fontkit.entryOfUser, installed.fontkit.entry, 'PDFKit loads the fontkit the patches use')
  })

  it('every patched method is there, the patches are in place once installed, and installing again changes nothing', () => {
    assert.doesNotThrow(() => checkPatchTargets(PATCH_TARGETS))
    installPatches()
    assert.deepEqual([...new Set(PATCH_TARGETS.map((t) => t.dependency))].sort(), [...DEPS].sort())
    const Stack = (require('pdfmake/js/StyleContextStack') as { default: { prototype: { getProperty: unknown } } }).default
    const pdfkit = require('pdfkit') as { prototype: { _setColorCore: unknown } }
    const before = [Stack.prototype.getProperty, pdfkit.prototype._setColorCore]
    // Ours, not PDFKit's: its _setColorCore normalises the colour on every call.
    assert.doesNotMatch(String(pdfkit.prototype._setColorCore), /color = this\._normalizeColor\(color\)/)
    installPatches()
    assert.deepEqual([Stack.prototype.getProperty, pdfkit.prototype._setColorCore], before)
  })

  it('an object lacking a patched method: the check fails naming the package, its version, the object and the method', () => {
    let checked = 0
    for (const target of PATCH_TARGETS) {
      for (const missing of target.methods) {
        // The real object's methods, all but one.
        const object = Object.fromEntries(target.methods.filter((m) => m !== missing).map((m) => [m, (target.object as Record<string, unknown>)[m]]))
        const err = failure([{ ...target, object }])
        const line = `${target.dependency} ${PATCHED_FOR[target.dependency]}: ${target.owner}.${missing} is missing (patched by ${target.patch})`
        assert.deepEqual(err.problems, [line])
        assert.ok(err.message.includes(line), err.message)
        checked++
      }
    }
    assert.ok(checked >= 14, `${checked} methods checked`)
  })

  it('an object gone (a moved internal file) or a metrics file gone: named too', () => {
    const [style] = PATCH_TARGETS
    assert.deepEqual(failure([{ ...style!, object: undefined }]).problems, [`pdfmake 0.3.11: ${style!.owner} is missing (patched by style-lookup.ts)`])
    const afm = PATCH_TARGETS.find((t) => t.files?.length)!
    assert.deepEqual(failure([{ ...afm, files: ['/nowhere/Helvetica.afm'] }]).problems, ['pdfkit 0.19.1: /nowhere/Helvetica.afm is missing (read by font-cache.ts)'])
  })

  it('another version installed: the check fails naming the installed version and the one patched for', () => {
    const installed = installedPackages()
    installed.pdfmake = { ...installed.pdfmake, version: '0.3.12' }
    assert.deepEqual(failure(PATCH_TARGETS, installed).problems, ['pdfmake 0.3.12 is installed; the patches were written for pdfmake 0.3.11'])
  })

  it('a second copy of PDFKit under pdfmake: the check fails naming both', () => {
    const installed = installedPackages()
    installed.pdfkit = { ...installed.pdfkit, entryOfUser: '/app/node_modules/pdfmake/node_modules/pdfkit/js/pdfkit.js' }
    assert.deepEqual(failure(PATCH_TARGETS, installed).problems, [
      `pdfkit 0.19.1: pdfmake loads /app/node_modules/pdfmake/node_modules/pdfkit/js/pdfkit.js, but the patches change ${installed.pdfkit.entry}`,
    ])
  })

  it("a render thread's entry, where pdfmake has lost a patched method: its task fails with the check's message, and nothing is patched", function () {
    this.timeout(60_000)
    // A render thread's entry (thread-entry.ts) and a task, in a process whose pdfmake lacks getProperty.
    const script = `
      import { createRequire } from 'node:module'
      const req = createRequire(process.cwd() + '/')
      delete req('pdfmake/js/StyleContextStack').default.prototype.getProperty
      const setColorCore = req('pdfkit').prototype._setColorCore
      let message = 'started'
      try {
        const entry = await import('./src/invoice/pdf/thread-entry.ts')
        await entry.default({ request: { items: [] }, today: '2026-11-02' })
      } catch (err) {
        message = err.message
      }
      process.stdout.write(JSON.stringify({ message, unpatched: req('pdfkit').prototype._setColorCore === setColorCore }))`
    const out = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 50_000 })) as { message: string; unpatched: boolean }
    assert.match(out.message, /^The pdfmake\/PDFKit\/fontkit patches of src\/invoice\/pdf\/patches\/ do not fit the installed packages/)
    assert.match(out.message, /\n- pdfmake 0\.3\.11: StyleContextStack\.prototype\.getProperty is missing \(patched by style-lookup\.ts\)$/)
    assert.equal(out.unpatched, true, 'PDFKit was left as it is')
  })

  it('a render thread (piscina) whose pdfmake has lost a patched method: its first render fails with the check\'s message', async function () {
    this.timeout(60_000)
    const pool = new Piscina({ filename: new URL('./helpers/pdf-thread-without-method.ts', import.meta.url).href, minThreads: 0, maxThreads: 1 })
    try {
      await assert.rejects(pool.run({ request: { items: [] }, today: '2026-11-02' }), (err: Error) => {
        assert.match(err.message, /^The pdfmake\/PDFKit\/fontkit patches of src\/invoice\/pdf\/patches\/ do not fit the installed packages/)
        assert.match(err.message, /- pdfmake 0\.3\.11: StyleContextStack\.prototype\.getProperty is missing \(patched by style-lookup\.ts\)/)
        return true
      })
    } finally {
      await pool.destroy()
    }
  })
})
