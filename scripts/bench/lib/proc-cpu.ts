// CPU time of a process and its descendants, read from /proc (Linux): what bench:invoice and
// bench:invoice-profile charge to each process of the system (API, worker, Redis, MongoDB engine)
// per invoice. Clock ticks of 10 ms, so a figure is meaningful over many requests, not one.
import { readFileSync, readdirSync } from 'node:fs'

const TICK_MS = 10 // USER_HZ is 100 on Linux

function ownCpuMs(pid: number): number {
  try {
    // The command name (field 2) may hold spaces: the fields after it start past its ")".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) * TICK_MS // utime, stime
  } catch {
    return 0
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = []
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim()
      if (text) out.push(...text.split(' ').map(Number))
    }
  } catch {
    // gone meanwhile
  }
  return out
}

/** CPU ms used so far by `pid` and every process below it (a guard and its service, say). */
export function treeCpuMs(pid: number): number {
  return ownCpuMs(pid) + childrenOf(pid).reduce((sum, c) => sum + treeCpuMs(c), 0)
}

/** CPU ms of several named process trees, to be diffed around a measured stretch. */
export function cpuOf(pids: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, treeCpuMs(pid)]))
}

export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(before).map((k) => [k, after[k]! - before[k]!]))
}
