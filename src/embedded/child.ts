// Child processes for embedded services: started with the parent, stopped with it (after what
// uses them), never orphaned. Each runs under a guard (guard.ts) in a process group of its own.
import { spawn, type ChildProcess } from 'node:child_process'
import { GUARD_SCRIPT } from './guard.ts'

const children = new Set<ChildProcess>()
let hooked = false

/** SIGKILL a guard and the service in its group. */
function killGroup(c: ChildProcess): void {
  if (c.exitCode !== null || c.signalCode !== null || !c.pid) return
  try {
    process.kill(-c.pid, 'SIGKILL')
  } catch {
    /* already gone */
  }
}

function killAll(): void {
  for (const c of children) killGroup(c)
}

function hookExit(): void {
  if (hooked) return
  hooked = true
  // 'exit' runs on every normal exit; signals are handled by the CLI which then exits.
  process.on('exit', killAll)
}

export interface StartedChild {
  /** The guard process (guard.ts); the service runs under it, in the guard's process group. */
  proc: ChildProcess
  stop(): Promise<void>
  /** SIGKILL the service and its guard at once (fault tests: a crash, not a stop). */
  kill(): void
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
): Promise<{ child: StartedChild; value: T }> {
  hookExit()
  return new Promise((resolve, reject) => {
    // Detached: a signal to our process group (Ctrl-C) does not reach it; we stop it last. Its
    // stdin is the pipe whose closing tells the guard that we are gone.
    const proc = spawn(process.execPath, ['-e', GUARD_SCRIPT, cmd, ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true })
    children.add(proc)
    let settled = false
    let tail = ''
    const timer = setTimeout(() => fail(new Error(`${cmd} did not become ready within ${timeoutMs} ms`)), timeoutMs)
    const stop = (): Promise<void> =>
      new Promise((res) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return res()
        proc.once('exit', () => res())
        proc.kill('SIGTERM')
        setTimeout(() => killGroup(proc), 5000).unref()
      })
    function fail(err: Error) {
      if (settled) return
      settled = true
      clearTimeout(timer)
      killGroup(proc)
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
          resolve({ child: { proc, stop, kill: () => killGroup(proc) }, value: v })
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
