// The CPU time of a local server's workerd processes, from /proc (Linux): what `npm run bench` reports per request,
// and what bench/d1-sessions.ts compares. Measurement only; nothing of it runs in the service.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Clock ticks per second, the unit of /proc's CPU times. */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The workerd processes of a process group (a `wrangler dev` spawned `detached`: its pid is the group's id). */
export function workerdPids(group: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat && stat.comm === 'workerd' && stat.pgrp === group) pids.push(Number(entry));
  }
  return pids;
}

function procStat(pid: number): { comm: string; pgrp: number; ticks: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp ... utime stime ...": comm may hold spaces, so split after the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const fields = text.slice(close + 2).split(' ');
  return { comm, pgrp: Number(fields[2]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/** utime + stime of the processes, in clock ticks. */
export function cpuTicks(pids: number[]): number {
  return pids.reduce((sum, pid) => sum + (procStat(pid)?.ticks ?? 0), 0);
}

export function workerdVersion(pids: number[]): string {
  for (const pid of pids) {
    try {
      return execFileSync(readlinkSync(`/proc/${pid}/exe`), ['--version'], { encoding: 'utf8' }).trim();
    } catch {
      // Try the next one.
    }
  }
  return 'unknown';
}
