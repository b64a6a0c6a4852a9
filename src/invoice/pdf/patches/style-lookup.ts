// pdfmake's style lookups without their garbage. For every property of every text node pdfmake
// asks its style stack (StyleContextStack.getProperty), which made a closure and a `new Set()` per
// call and, through getStyleProperty, another closure per call: ~1.5 ms of a 20-line invoice's
// render and much of its garbage. The same walk, allocating only for a style that `extends`
// another (which these invoices never use; there the original walk with its cycle guard runs).
// Answers are the same in the same order, so the PDF is byte for byte the same
// (test/invoice-pdf-fast-paths.test.ts compares renders with stock pdfmake's).
import { createRequire } from 'node:module'
import { requireInternal, type PatchTarget } from './patched-versions.ts'

type Style = Record<string, unknown> & { extends?: string | string[] }
interface StyleStack {
  styleDictionary: Record<string, Style | undefined>
  defaultStyle?: Record<string, unknown>
  styleOverrides?: Array<string | String | Record<string, unknown>>
  getProperty(property: string): unknown
  autopush(item: unknown): number
  pop(howMany?: number): void
}
interface StyleStackClass {
  prototype: StyleStack
  getStyleProperty(item: Record<string, unknown>, stack: StyleStack | undefined, property: string, defaultValue: unknown): unknown
}

const require = createRequire(import.meta.url)
const Stack = (requireInternal(require, 'pdfmake/js/StyleContextStack') as { default?: StyleStackClass } | undefined)?.default

/** What this patch replaces or calls: checked before anything is patched (patched-versions.ts). */
export const styleLookupTargets: PatchTarget[] = [
  { dependency: 'pdfmake', owner: 'StyleContextStack', object: Stack, methods: ['getStyleProperty'], patch: 'style-lookup.ts' },
  { dependency: 'pdfmake', owner: 'StyleContextStack.prototype', object: Stack?.prototype, methods: ['getProperty', 'autopush', 'pop'], patch: 'style-lookup.ts' },
]

const isValue = (v: unknown) => v !== undefined && v !== null

/** pdfmake's walk of a style and the styles it extends (the original, for the rare `extends`). */
function fromStyle(stack: StyleStack, name: string | String, property: string, visited: Set<string | String>): unknown {
  if (visited.has(name)) return undefined
  visited.add(name)
  const style = stack.styleDictionary[name as string]
  if (!style) return undefined
  if (isValue(style[property])) return style[property]
  if (style.extends) {
    const parents = Array.isArray(style.extends) ? style.extends : [style.extends]
    for (let i = parents.length - 1; i >= 0; i--) {
      const value = fromStyle(stack, parents[i]!, property, visited)
      if (isValue(value)) return value
    }
  }
  return undefined
}

const getProperty = function (this: StyleStack, property: string): unknown {
  const overrides = this.styleOverrides
  if (overrides) {
    for (let i = overrides.length - 1; i >= 0; i--) {
      const item = overrides[i]!
      if (typeof item === 'string' || item instanceof String) {
        const style = this.styleDictionary[item as string]
        if (!style) continue
        const value = style[property]
        if (isValue(value)) return value
        if (style.extends) {
          const inherited = fromStyle(this, item, property, new Set())
          if (isValue(inherited)) return inherited
        }
      } else if (isValue((item as Record<string, unknown>)[property])) {
        return (item as Record<string, unknown>)[property]
      }
    }
  }
  return this.defaultStyle && this.defaultStyle[property]
}

const getStyleProperty = function (item: Record<string, unknown>, stack: StyleStack | undefined, property: string, defaultValue: unknown): unknown {
  if (isValue(item[property])) return item[property]
  if (!stack) return defaultValue
  // pdfmake's `auto(item, callback)` without the callback: push, read, pop (no pop on a throw, as there).
  const pushed = stack.autopush(item)
  const value = stack.getProperty(property)
  if (pushed > 0) stack.pop(pushed)
  return isValue(value) ? value : defaultValue
}

/** Replace StyleContextStack.prototype.getProperty and StyleContextStack.getStyleProperty (once, by installPatches). */
export function installStyleLookup(): void {
  const stack = Stack!
  stack.prototype.getProperty = getProperty
  stack.getStyleProperty = getStyleProperty
}
