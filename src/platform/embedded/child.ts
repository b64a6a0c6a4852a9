// Child processes for embedded services: started with the parent, stopped with it, never orphaned.
import { spawn, type ChildProcess } from 'node:child_process'

const children = new Set<ChildProcess>()
let hooked = false

function killAll(): void {
  for (const c of children) {
    if (c.exitCode === null && c.pid) {
      try {
        process.kill(c.pid, 'SIGKILL')
      } catch {
        /* already gone */
      }
    }
  }
}

function hookExit(): void {
  if (hooked) return
  hooked = true
  // 'exit' runs on every normal exit; signals are handled by the CLI which then exits.
  process.on('exit', killAll)
}

export interface StartedChild {
  proc: ChildProcess
  stop(): Promise<void>
}

/**
 * Spawn `cmd` and resolve once `ready(line)` returns a value for a line of its output.
 * Rejects when the process exits first or the timeout passes.
 */
export function spawnUntilReady<T>(
  cmd: string,
  args: string[],
  ready: (line: string) => T | undefined,
  timeoutMs = 20_000,
  /** Own process group: a terminal's Ctrl-C (sent to the whole foreground group) does not reach it; the parent stops it. */
  ownGroup = false,
): Promise<{ child: StartedChild; value: T }> {
  hookExit()
  return new Promise((resolve, reject) => {
    // By default in our process group, so Ctrl-C reaches it too; ownGroup keeps it out of that.
    const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: ownGroup })
    children.add(proc)
    let settled = false
    let tail = ''
    const timer = setTimeout(() => fail(new Error(`${cmd} did not become ready within ${timeoutMs} ms`)), timeoutMs)
    const stop = (): Promise<void> =>
      new Promise((res) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return res()
        proc.once('exit', () => res())
        proc.kill('SIGTERM')
        setTimeout(() => proc.kill('SIGKILL'), 3000).unref()
      })
    function fail(err: Error) {
      if (settled) return
      settled = true
      clearTimeout(timer)
      proc.kill('SIGKILL')
      reject(new Error(`${err.message}\n${tail.slice(-2000)}`))
    }
    const onData = (buf: Buffer) => {
      const text = buf.toString('utf8')
      tail = (tail + text).slice(-4000)
      if (settled) return
      for (const line of text.split(/\r?\n/)) {
        const v = ready(line)
        if (v !== undefined) {
          settled = true
          clearTimeout(timer)
          resolve({ child: { proc, stop }, value: v })
          return
        }
      }
    }
    proc.stdout!.on('data', onData)
    proc.stderr!.on('data', onData)
    proc.on('error', (e) => fail(e))
    proc.on('exit', (code) => {
      children.delete(proc)
      fail(new Error(`${cmd} exited with code ${code} before it was ready`))
    })
  })
}
