import { ConfigError } from './config/env.js';
import type { Logger } from './log.js';
import { describeStop, type StopSummary } from './ledger/stop-summary.js';

export interface ReplicaLifecycle<A extends StoppableApp> {
  logger: Logger;
  /** Closes the database pools (and stops an embedded server). */
  closeDatabase(): Promise<void>;
  /** The start-up's database work and the app; `signal` aborts when a stop signal comes meanwhile (it may then throw). */
  start(signal: AbortSignal): Promise<A>;
  /** Called with the started app, unless a stop signal came first. */
  started?(app: A): void;
  /** Registers the stop handler (SIGTERM, SIGINT). */
  onStopSignal(handler: (signal: string) => void): void;
  exit(code: number): void;
}

/** An app that stops, saying what it left behind when it can (src/ledger/stop-summary.ts). */
export interface StoppableApp {
  stop(): Promise<StopSummary | undefined | void>;
}

/**
 * A replica from its open database to its exit code:
 * - start-up fails → the reason logged (fatal), the database closed, exit 1;
 *   a setting at fault (ConfigError: PORT in use) → its one line, exit 2;
 * - a stop signal during start-up → the start-up is aborted (its database
 *   wait ends; a step under way runs to its end, bounded by the database
 *   timeouts, the migrations apart: they have no limit, and a SIGKILL
 *   during them rolls their one transaction back) and the process exits 0,
 *   without a fatal line: being told to
 *   stop is not a failed start; an app it still started is stopped first;
 * - a stop signal later → the app stopped, the database closed, exit 0, or
 *   exit 1 with the reason logged when either of them failed.
 * Every stop ends on one line, `stopped (SIGTERM), exit N: …`, with what the
 * app left behind: the log says the stop completed, not only that it began.
 * One exit, decided in one place: the start-up's failure path and the
 * signal's cannot race each other for the code.
 */
export async function runReplica<A extends StoppableApp>(r: ReplicaLifecycle<A>): Promise<void> {
  const startup = new AbortController();
  let stopping = false;
  let app: A | undefined;
  let resolveStartup!: () => void;
  const startupSettled = new Promise<void>((resolve) => (resolveStartup = resolve));

  r.onStopSignal((signal) => {
    if (stopping) return;
    stopping = true;
    r.logger.info({ signal }, 'shutting down');
    startup.abort();
    void (async () => {
      await startupSettled;
      let code = 0;
      let left: StopSummary | undefined;
      if (app) {
        left = (await app.stop().catch((error: unknown) => {
          code = 1;
          r.logger.error({ err: error }, 'stop failed');
        })) || undefined;
      }
      await r.closeDatabase().catch((error: unknown) => {
        code = 1;
        r.logger.error({ err: error }, 'database close failed');
      });
      const what = code !== 0 ? 'with errors (above)' : !app ? 'nothing started' : left ? describeStop(left) : 'what it left behind unknown (the database did not answer)';
      const line = `stopped (${signal}), exit ${code}: ${what}`;
      if (code !== 0) r.logger.error({ signal, exitCode: code, ...left }, line);
      else r.logger.info({ signal, exitCode: code, ...left }, line);
      r.exit(code);
    })();
  });

  try {
    app = await r.start(startup.signal);
  } catch (error) {
    if (stopping) {
      r.logger.info({ reason: error instanceof Error ? error.message : String(error) }, 'start-up abandoned: told to stop');
      return resolveStartup();
    }
    // A setting at fault (PORT in use, a HOST that is not here): its one line, no stack, exit 2 as for any bad setting.
    const badSetting = error instanceof ConfigError;
    if (badSetting) r.logger.fatal(`start-up failed: ${error.problems.join('; ')}`);
    else r.logger.fatal({ err: error }, 'start-up failed');
    await r.closeDatabase().catch(() => {});
    r.exit(badSetting ? 2 : 1);
    return;
  }
  resolveStartup();
  if (!stopping) r.started?.(app);
}
