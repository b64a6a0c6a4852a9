// Every patch of pdfmake's and PDFKit's internals, installed once per thread after the check of
// patched-versions.ts: a render thread that loads the renderer (thread-render-pdf.ts) runs this
// before its first render, and stops there, naming the package and version, when a patched
// method is gone. No byte of a PDF changes (README.md names the tests that prove it).
import { checkPatchTargets, type PatchTarget } from './patched-versions.ts'
import { colorOpsTargets, installColorOps } from './color-ops.ts'
import { fontCacheTargets, installFontCache } from './font-cache.ts'
import { installStyleLookup, styleLookupTargets } from './style-lookup.ts'

/** Everything the patches replace, call or read, for the check. */
export const PATCH_TARGETS: readonly PatchTarget[] = [...styleLookupTargets, ...colorOpsTargets, ...fontCacheTargets]

let installed = false

/** Check every target, then patch (once; later calls do nothing). Throws PatchTargetError. */
export function installPatches(): void {
  if (installed) return
  checkPatchTargets(PATCH_TARGETS)
  installStyleLookup()
  installColorOps()
  installFontCache()
  installed = true
}
