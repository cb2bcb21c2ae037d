import { spawn, type ChildProcess } from 'node:child_process';
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

/**
 * A process of its own, outside the command's group, that ends the group
 * when this replica dies without saying so first. The replica holds the write
 * end of the guard's stdin; the kernel closes it however the replica ends
 * (SIGKILL, OOM, a crash), and the guard reads end-of-file: it sends the group
 * TERM, then KILL after the grace, as the watchdog would. Without it a
 * detached command outlives its replica and runs on beside the retry another
 * replica launches once the run's lease runs out. `release()` (the command
 * ended and its group was reaped) tells the guard to leave quietly.
 */
export interface GroupGuard {
  release(): void;
}

const GUARD_SCRIPT = [
  // A line `release` is the replica letting go; end-of-file is the replica gone.
  'read line; [ "$line" = release ] && exit 0',
  'kill -TERM -"$1" 2>/dev/null || exit 0',
  // Poll rather than sleep the whole grace: a group gone early is not signalled again (its id may be reused).
  'i=0; while kill -0 -"$1" 2>/dev/null; do [ "$i" -ge "$2" ] && { kill -KILL -"$1" 2>/dev/null; exit 0; }; sleep 0.1; i=$((i+1)); done',
].join('\n');

export function guardGroup(pgid: number, killGraceMs: number): GroupGuard {
  let guard: ChildProcess;
  try {
    guard = spawn('/bin/sh', ['-c', GUARD_SCRIPT, 'scheduler-bot-guard', String(pgid), String(Math.max(1, Math.ceil(killGraceMs / 100)))], {
      detached: true,
      // Nothing of the bot's environment (its secrets): the guard needs only its tools.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch {
    return { release: () => undefined };
  }
  // Neither the guard nor its pipe keeps the replica's event loop alive.
  guard.on('error', () => undefined);
  guard.stdin!.on('error', () => undefined);
  guard.unref();
  (guard.stdin as unknown as { unref?: () => void }).unref?.();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      guard.stdin!.end('release\n');
    },
  };
}
