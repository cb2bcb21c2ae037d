import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Deps } from '../deps.js';
import type { LauncherConfig } from '../db/schema.js';
import type { LaunchContext, LaunchOutcome, Launcher } from '../launcher.js';
import { resolveCommandUser, type CommandUser } from '../config/command-user.js';
import { OutputTail } from './output-tail.js';
import { renewRunLeases, type HeldRuns } from '../ledger/run-leases.js';
import { reportOutcome } from './report-outcome.js';

type CommandConfig = Extract<LauncherConfig, { kind: 'command' }>;
type CommandDeps = Pick<Deps, 'db' | 'clock' | 'logger' | 'replicaId' | 'config'>;

export interface CommandLauncherOptions {
  /** Between TERM and KILL when the watchdog ends a run. */
  killGraceMs?: number;
  /** How much of the end of stdout+stderr becomes the run's log excerpt. */
  tailBytes?: number;
  /** After the shell exits, how long to wait for background children still holding its output pipes. */
  drainMs?: number;
  /** Run commands as this user (name or uid); COMMAND_USER when absent. */
  user?: string;
}

export const DEFAULT_KILL_GRACE_MS = 5_000;

export const DEFAULT_TAIL_BYTES = 8 * 1024;

/**
 * What a job inherits from the bot: these and nothing else. The bot's
 * environment holds its own credentials (and whatever else the operator's
 * shell had), so it is never passed on wholesale; a job that needs a secret
 * gets it through `launcher.env` or its own configuration.
 */
const INHERITED = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ'] as const;

export function commandEnvironment(config: CommandConfig, ctx: LaunchContext, base: NodeJS.ProcessEnv = process.env, user?: CommandUser): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of INHERITED) if (base[k] !== undefined) env[k] = base[k]!;
  if (user) env.HOME = user.home;
  return {
    ...env,
    ...config.env,
    RUN_ID: String(ctx.runId),
    WORKFLOW: ctx.workflow.name,
    TENANT: ctx.tenant.id,
    TICK: ctx.tick ? ctx.tick.toISOString() : '',
    ATTEMPT: String(ctx.attempt),
    TRIGGER: ctx.trigger,
  };
}

interface Watched {
  tail: OutputTail;
  closed: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Signals a whole process group; false when no process of it is left. Never
 * throws: it runs from timers, where a throw would take the replica down.
 */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    // EPERM: a member changed its credentials; it exists, and only its owner can end it.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Runs `launcher.command` with /bin/sh as the leader of its own process group,
 * so the watchdog's TERM (and KILL after the grace) reaches everything the
 * command started, not just the shell. The watchdog and lease use real time:
 * they supervise a real process. What is written to the ledger uses the clock.
 */
export interface CommandLauncher extends Launcher {
  /**
   * For a replica shutting down: waits up to `graceMs` for the commands it
   * supervises, then ends their process groups (TERM, KILL after the kill
   * grace) and records them failed as interrupted. Nothing is left running
   * unsupervised, and another replica's retry engine sees an honest failure.
   */
  shutdown(graceMs: number): Promise<void>;
}

export function createCommandLauncher(deps: CommandDeps, held: HeldRuns, options: CommandLauncherOptions = {}): CommandLauncher {
  const userSpec = options.user ?? deps.config.COMMAND_USER;
  const user = userSpec ? resolveCommandUser(userSpec) : undefined;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const tailBytes = options.tailBytes ?? DEFAULT_TAIL_BYTES;
  const drainMs = options.drainMs ?? 1_000;
  const live = new Map<number, { interrupt: () => void; done: Promise<void> }>();

  return {
    kind: 'command',
    async shutdown(graceMs: number): Promise<void> {
      const running = [...live.values()];
      if (running.length === 0) return;
      const all = Promise.allSettled(running.map((r) => r.done));
      const waited = await Promise.race([all.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs))]);
      if (waited) return;
      for (const r of live.values()) r.interrupt();
      await Promise.allSettled([...live.values()].map((r) => r.done));
    },
    async launch(ctx: LaunchContext): Promise<LaunchOutcome> {
      const config = ctx.workflow.launcher;
      if (!config || config.kind !== 'command') return { started: false, error: 'workflow has no command launcher' };
      const log = deps.logger.child({ runId: ctx.runId, workflow: ctx.workflow.name, tenant: ctx.tenant.id });
      // A configured user that does not exist must not fall back to running as the bot.
      if (user && 'error' in user) return { started: false, error: user.error };

      const child = spawn('/bin/sh', ['-c', config.command], {
        cwd: config.cwd,
        env: commandEnvironment(config, ctx, process.env, user),
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Listen before any await: a quick command can exit before the next line runs.
      const watched = watch(child);
      const spawned = await new Promise<{ ok: true } | { ok: false; error: string }>((resolve) => {
        child.once('spawn', () => resolve({ ok: true }));
        child.once('error', (error) => resolve({ ok: false, error: error.message }));
      });
      if (!spawned.ok) return { started: false, error: spawned.error };

      held.add(ctx.runId);
      const control = { interrupted: false };
      const done = supervise(child, watched, ctx, config, log, control).finally(() => {
        held.release(ctx.runId);
        live.delete(ctx.runId);
      });
      live.set(ctx.runId, {
        done,
        interrupt: () => {
          control.interrupted = true;
          signalGroup(child.pid!, 'SIGTERM');
          setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), killGraceMs).unref();
        },
      });
      // Take the lease at once: the row may have been inserted without one.
      await renewRunLeases(deps, [ctx.runId], deps.clock.now()).catch((error) => log.warn({ err: error }, 'could not take the run lease'));
      return { started: true };
    },
  };

  function watch(child: ChildProcess): Watched {
    const tail = new OutputTail(tailBytes);
    child.stdout!.on('data', (c: Buffer) => tail.write(c));
    child.stderr!.on('data', (c: Buffer) => tail.write(c));
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { tail, closed, exited };
  }

  async function supervise(
    child: ChildProcess,
    watched: Watched,
    ctx: LaunchContext,
    config: CommandConfig,
    log: CommandDeps['logger'],
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
      killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), killGraceMs);
    }, ctx.timeoutSeconds * 1000);

    const { code, signal } = await exited;
    clearTimeout(watchdog);
    const timedOut = termSentAt !== undefined;
    let leftRunning = false;
    if (timedOut) {
      await reapGroup(pgid, termSentAt! + killGraceMs);
      clearTimeout(killTimer);
    } else if (groupHasLiveMembers(pgid)) {
      // The shell is done but something it started still runs: nobody would
      // supervise it any more, and "succeeded" would be a claim about work still going on.
      leftRunning = true;
      log.warn({ code }, 'command exited but left processes in its group: terminating them');
      signalGroup(pgid, 'SIGTERM');
      await reapGroup(pgid, Date.now() + killGraceMs);
    }
    // Background children may still hold the pipes; do not wait on them for ever.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, drainMs))]);
    child.stdout!.destroy();
    child.stderr!.destroy();

    const logExcerpt = tail.text() || null;
    if (control.interrupted) {
      await reportOutcome(deps, ctx.runId, { status: 'failed', error: 'interrupted: the scheduler-bot replica running it shut down', exitCode: code, logExcerpt });
    } else if (timedOut) {
      await reportOutcome(deps, ctx.runId, { status: 'failed', error: `timed out after ${ctx.timeoutSeconds}s (process group terminated)`, exitCode: code, logExcerpt });
    } else if (leftRunning) {
      const status = code !== null ? `exited with code ${code}` : `was killed by ${signal}`;
      await reportOutcome(deps, ctx.runId, { status: 'failed', error: `${status} but left processes running in its group; they were terminated`, exitCode: code, logExcerpt });
    } else if (code === 0) {
      await reportOutcome(deps, ctx.runId, { status: 'succeeded', exitCode: 0, logExcerpt });
    } else {
      const error = code !== null ? `exited with code ${code}` : `killed by ${signal}`;
      await reportOutcome(deps, ctx.runId, { status: 'failed', error: lastLineOr(logExcerpt, error), exitCode: code, logExcerpt });
    }
    log.debug({ code, signal, timedOut, command: config.command }, 'command finished');
  }
}

/**
 * After TERM: give the group its grace, then KILL whatever is left (members
 * that trap or ignore TERM). Polls the group rather than trusting the leader's
 * exit, because the leader often dies first and leaves children behind.
 */
async function reapGroup(pgid: number, until: number): Promise<void> {
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
function groupHasLiveMembers(pgid: number): boolean {
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

/** The error of a failed command: its exit status, with the last line it printed when there is one. */
function lastLineOr(output: string | null, status: string): string {
  const last = output
    ?.split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .pop();
  return last ? `${status}: ${last.slice(0, 500)}` : status;
}
