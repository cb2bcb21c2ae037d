import { spawn, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import type { Deps } from '../deps.js';
import type { LauncherConfig } from '../db/schema.js';
import type { LaunchContext, LaunchOutcome, Launcher } from '../launcher.js';
import { resolveCommandUser, type CommandUser } from '../config/command-user.js';
import { supervise, watch } from './command-supervisor.js';
import { guardGroup, signalGroup } from './process-group.js';
import { spawnFailure, type CwdState, type SpawnFailure } from '../domain/spawn-failure.js';
import { takeRunLease, type HeldRuns } from '../ledger/run-leases.js';
import { InFlightRuns, SHUTTING_DOWN } from './in-flight.js';

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
  /** Aborted when the replica stops: ends the retrying of outcome reports the database has not taken (report-outcome.ts). */
  stop?: AbortSignal;
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
  const live = new InFlightRuns();

  return {
    kind: 'command',
    shutdown: (graceMs: number) => live.shutdown(graceMs),
    async launch(ctx: LaunchContext): Promise<LaunchOutcome> {
      const config = ctx.workflow.launcher;
      if (!config || config.kind !== 'command') return { started: false, error: 'workflow has no command launcher' };
      if (!live.open) return { started: false, error: SHUTTING_DOWN };
      const log = deps.logger.child({ runId: ctx.runId, workflow: ctx.workflow.name, tenant: ctx.tenant.id });
      // A configured user that does not exist must not fall back to running as the bot; nor will it exist by the retry.
      if (user && 'error' in user) return { started: false, refusal: { kind: 'cannot_start', reason: user.error } };

      let child: ChildProcess;
      try {
        child = spawn('/bin/sh', ['-c', config.command], {
          cwd: config.cwd,
          env: commandEnvironment(config, ctx, process.env, user),
          ...(user ? { uid: user.uid, gid: user.gid } : {}),
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
      } catch (error) {
        // Some failures (a working directory that is a file) are thrown rather than emitted.
        return notStarted(spawnFailure(error as NodeJS.ErrnoException, config.cwd, cwdStateOf(config.cwd)));
      }
      // Listen before any await: a quick command can exit before the next line runs.
      const watched = watch(child, tailBytes);
      const spawned = await new Promise<{ ok: true } | { ok: false; failure: SpawnFailure }>((resolve) => {
        child.once('spawn', () => resolve({ ok: true }));
        child.once('error', (error) => resolve({ ok: false, failure: spawnFailure(error, config.cwd, cwdStateOf(config.cwd)) }));
      });
      if (!spawned.ok) return notStarted(spawned.failure);

      // Should this replica die, the command dies with it rather than run on beside the retry another replica launches.
      const guard = guardGroup(child.pid!, killGraceMs);
      held.add(ctx.runId, () => endLostRun(child, log, killGraceMs));
      const control = { interrupted: false };
      const done = supervise({ deps, killGraceMs, drainMs, guard, ...(options.stop ? { stop: options.stop } : {}) }, child, watched, ctx, config, log, control).finally(() => {
        guard.release();
        held.release(ctx.runId);
        live.delete(ctx.runId);
      });
      live.add(ctx.runId, {
        done,
        interrupt: () => {
          control.interrupted = true;
          endGroup(child.pid!, killGraceMs);
        },
      });
      // Take the lease at once: the row may have been inserted without one. None to take: the row stopped being
      // ours between launchRun's look and the spawn (a stall in between), so the command ends at once.
      const taken = await takeRunLease(deps, ctx.runId, deps.clock.now()).catch((error) => log.warn({ err: error }, 'could not take the run lease'));
      if (taken === 0) held.lose(ctx.runId);
      return { started: true };
    },
  };
}

/** A spawn that failed: for good (no retry: launchRefusalError's `launch failed: … (permanent: not retried)`) or for now. */
function notStarted(failure: SpawnFailure): LaunchOutcome {
  return failure.permanent ? { started: false, refusal: { kind: 'cannot_start', reason: failure.error } } : { started: false, error: failure.error };
}

/** TERM to the whole group, KILL after the grace. */
function endGroup(pgid: number, killGraceMs: number): void {
  signalGroup(pgid, 'SIGTERM');
  setTimeout(() => signalGroup(pgid, 'SIGKILL'), killGraceMs).unref();
}

/**
 * The run is no longer this replica's (renewHeldRuns, or the lease taken
 * after the spawn): failed as "worker lost" while this replica stalled, its
 * next attempt perhaps running on another replica. Its command is ended as
 * if this replica had died; its outcome then finds the row ended and
 * changes nothing. A command already exited is the supervisor's to finish.
 */
function endLostRun(child: ChildProcess, log: Deps['logger'], killGraceMs: number): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  log.warn("run no longer this replica's (failed or ended elsewhere while this replica stalled): ending its process group");
  endGroup(child.pid!, killGraceMs);
}

/** What the working directory is, looked at only after a spawn failed (see domain/spawn-failure.ts). */
function cwdStateOf(cwd: string | undefined): CwdState | undefined {
  if (cwd === undefined) return undefined;
  try {
    return statSync(cwd).isDirectory() ? 'directory' : 'not_a_directory';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'missing' : code === 'ENOTDIR' ? 'not_a_directory' : 'unknown';
  }
}
