// Docs a newcomer finishes (docs/README.md): README.md stays at most 150 lines and every page of
// docs/ at most 600; each page opens with a summary before its first section and, when it has
// three sections or more, a list of contents linking to them (README.md, the front page, is short
// enough without); every Markdown link between these
// pages lands on a file that exists and, with an anchor, on a heading of it; docs/README.md lists
// every page.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')

/** The Markdown of a page with its fenced code blocks blanked (a `#` line in a script is no heading). */
const prose = (md: string) => md.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')

const headings = (md: string) => [...prose(md).matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!.trim())

interface PageProblem {
  page: string
  problem: string
}

/** What is wrong with one docs page's shape: its length, its summary, its contents. */
export function pageShape(page: string, md: string, maxLines: number, contents = true): PageProblem[] {
  const out: PageProblem[] = []
  const lines = md.split('\n').length - (md.endsWith('\n') ? 1 : 0)
  if (lines > maxLines) out.push({ page, problem: `has ${lines} lines, more than ${maxLines}: split it (docs/README.md lists the pages)` })
  const text = prose(md)
  const firstSection = text.search(/^## /m)
  const opening = firstSection < 0 ? text : text.slice(0, firstSection)
  const summary = opening
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#') && !/^\s*[-*] \[/.test(l))
    .join(' ')
  if (summary.length < 80) out.push({ page, problem: 'opens with no summary (a paragraph before its first "## " section)' })
  const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!.trim())
  if (contents && sections.length >= 3) {
    const listed = new Set([...opening.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!))
    const missing = sections.filter((s) => !listed.has(slug(s)))
    if (missing.length) out.push({ page, problem: `its contents (links before the first section) leave out: ${missing.join('; ')}` })
  }
  return out
}

/** Links from `page` to other pages (or itself) whose file or heading does not exist. */
export function brokenLinks(page: string, md: string, pages: Map<string, string>): PageProblem[] {
  const out: PageProblem[] = []
  for (const m of prose(md).matchAll(/\]\(([^)\s#]*\.md)?(?:#([^)\s]+))?\)/g)) {
    const [, file, anchor] = m
    if (file === undefined && anchor === undefined) continue
    if (file && /^[a-z]+:/.test(file)) continue
    const target = file ? normalize(join(dirname(page), file)) : page
    const targetMd = pages.get(target) ?? (existsSync(target) ? readFileSync(target, 'utf8') : undefined)
    if (targetMd === undefined) {
      out.push({ page, problem: `links to ${file}, which does not exist` })
      continue
    }
    if (anchor && !headings(targetMd).some((h) => slug(h) === anchor)) out.push({ page, problem: `links to ${target}#${anchor}, which is no heading there` })
  }
  return out
}

describe('docs pages: short, summarised, linked right', () => {
  const pages = new Map<string, string>([['README.md', readFileSync('README.md', 'utf8')]])
  for (const f of readdirSync('docs').filter((f) => f.endsWith('.md')).sort()) pages.set(`docs/${f}`, readFileSync(`docs/${f}`, 'utf8'))

  it('README.md has at most 150 lines; every docs page at most 600, opening with a summary and its contents', () => {
    const problems = [...pages].flatMap(([page, md]) => (page === 'docs/README.md' ? [] : pageShape(page, md, page === 'README.md' ? 150 : 600, page !== 'README.md')))
    assert.deepEqual(problems.map((p) => `${p.page} ${p.problem}`), [])
  })

  it('every link between the pages reaches a file and, with an anchor, a heading of it', () => {
    const problems = [...pages].flatMap(([page, md]) => brokenLinks(page, md, pages))
    assert.deepEqual(problems.map((p) => `${p.page} ${p.problem}`), [])
  })

  it('docs/README.md lists every page of docs/', () => {
    const index = pages.get('docs/README.md')!
    const unlisted = [...pages.keys()].filter((p) => p.startsWith('docs/') && p !== 'docs/README.md' && !index.includes(`(${p.slice(5)})`))
    assert.deepEqual(unlisted, [])
  })

  it('the checks fail on a page that breaks them', () => {
    const long = `# T\n\n${'x '.repeat(50)}\n\n- [A](#a)\n\n## A\n\n## B\n\n## C\n${'\n'.repeat(600)}`
    assert.deepEqual(
      pageShape('docs/t.md', long, 600).map((p) => p.problem.split(' ')[0]),
      ['has', 'its'],
    )
    assert.match(pageShape('docs/t.md', '# T\n\n## A\n', 600)[0]!.problem, /no summary/)
    const page = '# T\n\n[a](nowhere.md) [b](#missing) [c](README.md#docs) [d](#t)\n'
    const links = brokenLinks('docs/t.md', page, new Map([['docs/README.md', '# docs/\n'], ['docs/t.md', page]]))
    assert.deepEqual(links.map((p) => p.problem), ['links to nowhere.md, which does not exist', 'links to docs/t.md#missing, which is no heading there'])
  })
})
