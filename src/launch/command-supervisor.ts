import type { ChildProcess } from 'node:child_process';
import type { Deps } from '../deps.js';
import type { LauncherConfig } from '../db/schema.js';
import type { LaunchContext } from '../launcher.js';
import { OutputTail } from './output-tail.js';
import { groupHasLiveMembers, reapGroup, signalGroup, type GroupGuard } from './process-group.js';
import { reportOutcome } from './report-outcome.js';
import { redactSecrets } from '../secrets.js';
import { exitStatusText } from '../domain/exit-status.js';
import { errorLineOf } from '../domain/error-line.js';
import { commandExitError } from '../domain/spawn-failure.js';

/** Supervising one command of the command launcher (command-launcher.ts) until it ends, and reporting how it ended. */

type CommandConfig = Extract<LauncherConfig, { kind: 'command' }>;

export interface Supervision {
  deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'replicaId' | 'config'>;
  /** Between TERM and KILL. */
  killGraceMs: number;
  /** After the shell exits, how long to wait for background children still holding its output pipes. */
  drainMs: number;
  /** Aborted when the replica stops (past its shutdown grace): a report the database has not taken by then is given up. */
  stop?: AbortSignal;
  /** Ends the group if the replica dies; released once the group is reaped (process-group.ts guardGroup). */
  guard?: GroupGuard;
}

export interface Watched {
  tail: OutputTail;
  closed: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Keeps the tail of the command's output and the moments it exits and closes its pipes. Listen before any await. */
export function watch(child: ChildProcess, tailBytes: number): Watched {
  const tail = new OutputTail(tailBytes);
  child.stdout!.on('data', (c: Buffer) => tail.write(c));
  child.stderr!.on('data', (c: Buffer) => tail.write(c));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { tail, closed, exited };
}

/**
 * Waits for the command under a watchdog (TERM at its timeout, KILL after
 * the grace), ends what it left running in its group, and reports the outcome
 * through the ledger.
 */
export async function supervise(
  sup: Supervision,
  child: ChildProcess,
  watched: Watched,
  ctx: LaunchContext,
  config: CommandConfig,
  log: Supervision['deps']['logger'],
  control: { interrupted: boolean },
): Promise<void> {
  const pgid = child.pid!;
  const { tail, closed, exited } = watched;

  let termSentAt: number | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const watchdog = setTimeout(() => {
    termSentAt = Date.now();
    log.warn({ timeoutSeconds: ctx.timeoutSeconds }, 'run timed out: terminating its process group');
    signalGroup(pgid, 'SIGTERM');
    // A leader that traps TERM never exits on its own.
    killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), sup.killGraceMs);
  }, ctx.timeoutSeconds * 1000);

  const { code, signal } = await exited;
  clearTimeout(watchdog);
  const timedOut = termSentAt !== undefined;
  let leftRunning = false;
  if (timedOut) {
    await reapGroup(pgid, termSentAt! + sup.killGraceMs);
    clearTimeout(killTimer);
  } else if (groupHasLiveMembers(pgid)) {
    // The shell is done but something it started still runs: nobody would
    // supervise it any more, and "succeeded" would be a claim about work still going on.
    leftRunning = true;
    log.warn({ code }, 'command exited but left processes in its group: terminating them');
    signalGroup(pgid, 'SIGTERM');
    await reapGroup(pgid, Date.now() + sup.killGraceMs);
  }
  // The group is gone: nothing left for the guard to end, and its id may be reused from now on.
  sup.guard?.release();
  // Background children may still hold the pipes; do not wait on them for ever.
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, sup.drainMs))]);
  child.stdout!.destroy();
  child.stderr!.destroy();

  // Secrets go before the error's line is cut from it (a half secret is one no redactor finds).
  // The error's line comes from the output itself, never from the marker the tail puts before it.
  let output = '';
  const logExcerpt = tail.text((body, cutAtStart) => (output = redactSecrets(body, ctx.tenant.id, { start: cutAtStart }))) || null;
  const report = (outcome: Parameters<typeof reportOutcome>[2]) => reportOutcome(sup.deps, ctx.runId, outcome, sup.stop);
  if (control.interrupted) {
    await report({ status: 'failed', error: 'interrupted: the scheduler-bot replica running it shut down', exitCode: code, logExcerpt });
  } else if (timedOut) {
    await report({ status: 'failed', error: `timed out after ${ctx.timeoutSeconds}s (process group terminated)`, exitCode: code, logExcerpt });
  } else if (leftRunning) {
    await report({ status: 'failed', error: `${exitStatusText(code, signal)} but left processes running in its group; they were terminated`, exitCode: code, logExcerpt });
  } else if (code === 0) {
    await report({ status: 'succeeded', exitCode: 0, logExcerpt });
  } else {
    await report({ status: 'failed', error: withErrorLine(exitStatusText(code, signal), code, output), exitCode: code, logExcerpt });
  }
  log.debug({ code, signal, timedOut, command: config.command }, 'command finished');
}

/**
 * The error of a failed command: its exit status, with the last line it printed when there is one (domain/error-line.ts),
 * marked permanent when that line is the shell saying it could not find or run the command (domain/spawn-failure.ts).
 */
function withErrorLine(status: string, code: number | null, output: string): string {
  return commandExitError(status, code, errorLineOf(output));
}
