// A CPU hog: busy processes that keep the machine's cores saturated while a test runs (the
// promises under test must hold on a loaded machine), stopped by PID when the test is done.
import { spawn, type ChildProcess } from 'node:child_process'
import { cpus } from 'node:os'

export interface CpuHog {
  stop(): Promise<void>
}

/** One busy process per core by default. */
export function startCpuHog(processes = cpus().length): CpuHog {
  const children: ChildProcess[] = Array.from({ length: processes }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
  return {
    async stop() {
      await Promise.all(
        children.map((c) => new Promise<void>((res) => (c.exitCode !== null || c.signalCode !== null ? res() : (c.once('exit', () => res()), c.kill('SIGKILL'))))),
      )
    },
  }
}
