// Free ports for servers a test starts in another process (a `start`, a worker, a redis-server).
// Such a port is free when checked and bound only later, by the child: in between, anything else
// on the machine can take it. A port the kernel hands out on its own (a listener on port 0, the
// local end of every outgoing connection: 32768–60999 on Linux) is taken all the time while the
// suite runs on two jobs, which is how `start` once found its invoice port held by its own
// MongoDB engine. So these come from below that range, in random order: only another test
// choosing the same port at the same moment could take one.
import getPort from 'get-port'

const LOW = 20_000
const HIGH = 32_000

/** A free loopback port below the kernel's ephemeral range, none of `exclude`. */
export function freePort(exclude: number[] = []): Promise<number> {
  const candidates = Array.from({ length: 64 }, () => LOW + Math.floor(Math.random() * (HIGH - LOW)))
  return getPort({ host: '127.0.0.1', port: candidates, exclude })
}

/** `n` distinct free ports (freePort). */
export async function freePorts(n: number, exclude: number[] = []): Promise<number[]> {
  const ports: number[] = []
  while (ports.length < n) ports.push(await freePort([...exclude, ...ports]))
  return ports
}
