// docs/benchmarks.md's table of current figures agrees with the sections below it: every row links
// to a section of the page, and every number in its "latest" cell appears in that section's text
// (a benchmark that rewrites its own section with new figures makes its row fail here until the
// row is updated too). Every benchmark section is linked from at least one row.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'

const PAGE = 'docs/benchmarks.md'

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-')

/** The page's `## ` sections by anchor, with their text. */
function sections(md: string): Map<string, { heading: string; text: string }> {
  const out = new Map<string, { heading: string; text: string }>()
  const parts = md.split(/\n(?=## )/)
  for (const part of parts.slice(1)) {
    const heading = part.slice(3, part.indexOf('\n'))
    out.set(slug(heading), { heading, text: part })
  }
  return out
}

interface Row {
  anchor: string
  measure: string
  latest: string
}

function currentFigures(md: string): Row[] {
  const table = sections(md).get('current-figures')
  assert.ok(table, 'a "## Current figures" section')
  const rows: Row[] = []
  for (const line of table.text.split('\n')) {
    const m = /^\| \[[^\]]+\]\(#([^)]+)\) \| ([^|]+) \| ([^|]+) \|/.exec(line)
    if (m) rows.push({ anchor: m[1]!, measure: m[2]!.trim(), latest: m[3]!.trim() })
  }
  return rows
}

/** The numbers of a cell as written (thousands separators kept), signs and units dropped. */
const numbers = (cell: string) => cell.match(/\d[\d,]*(?:\.\d+)?/g) ?? []

describe('docs/benchmarks.md: the current figures agree with the latest runs', () => {
  const md = readFileSync(PAGE, 'utf8')
  const bySlug = sections(md)
  const rows = currentFigures(md)

  it('every row links to a section of the page, and every number of its "latest" cell is in that section', () => {
    assert.ok(rows.length >= 20, `rows found: ${rows.length}`)
    for (const row of rows) {
      const section = bySlug.get(row.anchor)
      assert.ok(section, `row "${row.measure}" links to #${row.anchor}, which is no section of ${PAGE}`)
      for (const n of numbers(row.latest)) {
        assert.ok(section.text.includes(n), `row "${row.measure}": ${n} (of "${row.latest}") does not appear in "## ${section.heading}"`)
      }
    }
  })

  it('every benchmark section has a row', () => {
    const linked = new Set(rows.map((r) => r.anchor))
    const general = new Set(['current-figures', 'how-the-benchmarks-measure', 'ports-and-folders'])
    for (const [anchor, { heading }] of bySlug) {
      if (!general.has(anchor)) assert.ok(linked.has(anchor), `"## ${heading}" has no row in the current figures`)
    }
  })

  it('the check fails on a row whose figure its section does not hold', () => {
    const broken = md.replace('| 11,610,132 |', '| 11,610,133 |')
    const row = currentFigures(broken).find((r) => r.latest === '11,610,133')!
    const section = sections(broken).get(row.anchor)!
    assert.equal(section.text.includes('11,610,133'), false)
  })
})
