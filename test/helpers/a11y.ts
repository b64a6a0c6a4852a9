// Accessibility checks of a page in Chromium: axe-core run inside the page, and the WCAG contrast
// of one element's text. Functions handed to evaluate() declare no named helpers: tsx would wrap
// them with its own, which do not exist in the page.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** The serious and critical axe-core violations of the page as it is now ("rule: selectors"). The
 * script is evaluated over the DevTools protocol, which the page's own CSP does not govern. */
export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE)
  const found: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> = await page.evaluate(() =>
    (window as any).axe.run(document, { resultTypes: ['violations'] }).then((r: any) => r.violations),
  )
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
}

/** WCAG 2 contrast ratio of an element's text against the first opaque background behind it;
 * fails when the element is translucent (opacity lowers the real contrast). */
export async function contrastOf(page: Page, selector: string): Promise<number> {
  const c = await page.locator(selector).evaluate((e) => {
    let bg: Element | null = e
    while (bg && /rgba\(.*, 0\)$/.test(getComputedStyle(bg).backgroundColor)) bg = bg.parentElement
    return { color: getComputedStyle(e).color, opacity: getComputedStyle(e).opacity, bg: getComputedStyle(bg ?? document.body).backgroundColor }
  })
  assert.equal(c.opacity, '1', `${selector} is translucent`)
  const lum = (css: string) => {
    const [r, g, b] = css.match(/[\d.]+/g)!.map(Number).map((v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
  }
  const [a, b] = [lum(c.color), lum(c.bg)]
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
}
