// Benchmarks record their results in docs/benchmarks.md: each owns one "## " section, found by
// its first line, which a new run replaces; every other section is left as it is.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

export function writeBenchSection(section: string, path = 'docs/benchmarks.md'): void {
  const heading = section.split('\n')[0]!
  const current = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n'
  const start = current.indexOf(heading)
  const end = start < 0 ? -1 : current.indexOf('\n## ', start + heading.length)
  const next = start < 0 ? `${current.trimEnd()}\n\n${section}` : current.slice(0, start) + section.trimEnd() + (end < 0 ? '' : `\n\n${current.slice(end + 1)}`)
  writeFileSync(path, next.trimEnd() + '\n')
}
