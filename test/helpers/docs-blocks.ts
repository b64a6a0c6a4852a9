// The runnable shell examples of a Markdown page, and a runner that pastes them, in page order,
// into one bash shell the way a reader would, stopping at the first block that fails.
// Convention (docs/testing.md, "Docs examples"): a fence whose info string is `sh` or `bash` runs;
// `sh illustration` (or `bash illustration`) is shown but never run; other languages never run.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fromMarkdown } from 'mdast-util-from-markdown'

export interface ShellBlock {
  /** 1-based line of the opening fence in the page. */
  line: number
  code: string
}

const SHELLS = new Set(['sh', 'bash'])

type MdNode = { type: string; lang?: string | null; meta?: string | null; value?: string; position?: { start: { line: number } }; children?: MdNode[] }

/** Every `sh`/`bash` block meant to run, in page order. An unknown word after `sh` is an error, so a typo never silently skips a block. */
export function runnableBlocks(markdown: string, page = 'page'): ShellBlock[] {
  const out: ShellBlock[] = []
  const walk = (node: MdNode) => {
    if (node.type === 'code' && node.lang && SHELLS.has(node.lang)) {
      const line = node.position!.start.line
      const meta = (node.meta ?? '').trim()
      if (meta === '') out.push({ line, code: node.value ?? '' })
      else if (meta !== 'illustration') throw new Error(`${page}:${line}: info string "${node.lang} ${meta}": only "${node.lang}" (runs) or "${node.lang} illustration" (never runs) are known`)
    }
    for (const c of node.children ?? []) walk(c)
  }
  walk(fromMarkdown(markdown) as MdNode)
  return out
}

export interface PageRun {
  ok: boolean
  /** What each block printed (stdout and stderr interleaved), by the block's line. */
  outputs: Map<number, string>
  /** The block that failed or was still running at the deadline, with what it printed. */
  failed?: { line: number; output: string; reason: string }
}

/**
 * Runs the blocks in one `bash` (errexit, nounset, pipefail: a failing command, an unset variable
 * or a failing stage of a pipe stops the page), in `cwd`. Each block is sourced from a file of its
 * own, so the variables a block sets are there for the next one, as in a reader's terminal.
 */
export async function runPage(blocks: ShellBlock[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<PageRun> {
  const dir = mkdtempSync(join(tmpdir(), 'qw-docs-blocks-'))
  const mark = `@@docs-${randomBytes(6).toString('hex')}`
  const lines = ['exec 2>&1', 'set -euo pipefail']
  blocks.forEach((b, i) => {
    const file = join(dir, `block-${i}.sh`)
    writeFileSync(file, b.code + '\n')
    lines.push(`echo "${mark} start ${b.line}"`, `source ${JSON.stringify(file)}`, `echo "${mark} ok ${b.line}"`)
  })
  const driver = join(dir, 'page.sh')
  writeFileSync(driver, lines.join('\n') + '\n')

  const child = spawn('bash', [driver], { cwd: opts.cwd, env: opts.env ?? process.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let text = ''
  child.stdout.on('data', (b) => (text += b))
  child.stderr.on('data', (b) => (text += b))
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    // The page's shell and whatever its blocks started.
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      /* gone */
    }
  }, opts.timeoutMs)
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
  clearTimeout(timer)
  rmSync(dir, { recursive: true, force: true })

  const outputs = new Map<number, string>()
  let current: number | undefined
  let okLast = true
  const printed = text.split('\n')
  if (printed[printed.length - 1] === '') printed.pop()
  for (let raw of printed) {
    // A block whose last output has no newline leaves the mark at the end of that line.
    const at = raw.indexOf(mark)
    if (at > 0 && current !== undefined && !okLast) outputs.set(current, outputs.get(current)! + raw.slice(0, at) + '\n')
    if (at > 0) raw = raw.slice(at)
    const m = at >= 0 ? /^\S+ (start|ok) (\d+)$/.exec(raw) : null
    if (m) {
      current = Number(m[2])
      okLast = m[1] === 'ok'
      if (!okLast) outputs.set(current, '')
      continue
    }
    if (current !== undefined && !okLast) outputs.set(current, outputs.get(current)! + raw + '\n')
  }
  const ran = blocks.filter((b) => outputs.has(b.line))
  const last = ran[ran.length - 1]
  const allOk = code === 0 && !timedOut && ran.length === blocks.length && okLast
  if (allOk) return { ok: true, outputs }
  const line = last?.line ?? blocks[0]?.line ?? 0
  const reason = timedOut ? `still running after ${opts.timeoutMs} ms` : `exit status ${code}`
  return { ok: false, outputs, failed: { line, output: outputs.get(line) ?? text, reason } }
}
