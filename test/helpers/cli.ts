// The `queueworks` command line (bin/queueworks.mjs) run as a user runs it: a child process whose
// exit code and output the CLI tests read (tmux runs the interactive ones).
import { spawn } from 'node:child_process'
import { join } from 'node:path'

export const BIN = join(process.cwd(), 'bin/queueworks.mjs')

export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (b) => (out += b))
    child.stderr.on('data', (b) => (err += b))
    child.on('exit', (code) => resolve({ code, out, err }))
  })
}
