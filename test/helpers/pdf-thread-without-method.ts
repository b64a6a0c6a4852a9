// A render thread (for test/invoice-pdf-patches.test.ts) whose pdfmake has lost a method the
// patches replace, as after an upgrade that renamed it: it removes StyleContextStack's getProperty,
// then starts as every render thread does, by loading src/invoice/pdf/thread-entry.ts.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
delete (require('pdfmake/js/StyleContextStack') as { default: { prototype: { getProperty?: unknown } } }).default.prototype.getProperty

// Through require: a render thread runs under tsx's CommonJS hooks (thread-render-output.ts).
const entry = require('../../src/invoice/pdf/thread-entry.ts') as { default: (task: unknown) => Promise<unknown> }

export default entry.default
