// The guard an embedded service (redis-server, the MongoDB engine) runs under. The service must
// not get the terminal's Ctrl-C or a supervisor's SIGTERM to the process group at the same moment
// as the APIs and workers that use it: it would be gone while they drain. So the guard is started
// in a session of its own (detached) and the service runs in the guard's process group. It ends
// the service when told to (SIGTERM/SIGINT to the guard) and also when its parent dies, even by
// SIGKILL: the parent holds the write end of the guard's stdin, and the kernel closes it then.
// It is plain JavaScript, run with `node -e`: no loader, a few milliseconds to start.

/** Arguments: the service's command and its arguments. Exits with the service's exit code. */
export const GUARD_SCRIPT = `
const { spawn } = require('node:child_process')
const [cmd, ...args] = process.argv.slice(1)
const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] })
let stopping = false
function stop() {
  if (stopping) return
  stopping = true
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  setTimeout(() => child.kill('SIGKILL'), 3000).unref()
}
child.on('error', (err) => {
  console.error(String(err))
  process.exit(127)
})
child.on('exit', (code) => process.exit(code ?? (stopping ? 0 : 1)))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
process.stdin.on('end', stop)
process.stdin.on('error', stop)
process.stdin.resume()
`
