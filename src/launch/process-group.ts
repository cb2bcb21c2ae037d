import { readdirSync, readFileSync } from 'node:fs';

/** The process group a command launcher's command leads: signalled, polled and reaped as one. */

/**
 * Signals a whole process group; false when no process of it is left. Never
 * throws: it runs from timers, where a throw would take the replica down.
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: a member changed its credentials; it exists, and only its owner can end it.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * After TERM: give the group its grace, then KILL whatever is left (members
 * that trap or ignore TERM). Polls the group rather than trusting the leader's
 * exit, because the leader often dies first and leaves children behind.
 */
export async function reapGroup(pgid: number, until: number): Promise<void> {
  while (Date.now() < until) {
    if (!groupHasLiveMembers(pgid)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  signalGroup(pgid, 'SIGKILL');
  // KILL is not instant on a busy machine: report the run only once its processes are gone.
  for (let i = 0; i < 40 && groupHasLiveMembers(pgid); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

/**
 * Whether any process of the group is still running. Zombies do not count:
 * an orphan that exited waits for init to reap it, and where init does not
 * reap (some containers) it would otherwise look alive for ever.
 */
export function groupHasLiveMembers(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return true; // no /proc: trust the signal
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After the command name: state, ppid, pgrp, …
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') return true;
    } catch {
      // exited while we looked
    }
  }
  return false;
}
