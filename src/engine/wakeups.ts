import pg from 'pg';
import type { Logger } from '../log.js';
import { systemClock, type Clock } from '../clock.js';
import { DB_TIMEOUTS } from '../db/connect.js';
import { isConnectionError } from '../db/connection-errors.js';
import { FailureStreak } from './failure-streak.js';
import { backoffAfterFailure } from './runner.js';

/**
 * One dedicated connection per process that LISTENs on the given channels and
 * calls `onNotify(channel)` for each NOTIFY. Wake-ups are an optimisation: when
 * the connection drops (Postgres restart), it reconnects with back-off and
 * fires every channel once, since notifications may have been missed meanwhile.
 * The back-off is the loops' own (a few seconds at most, jittered), and the
 * connect and LISTEN statements time out, so a restart of the server costs
 * wake-ups for seconds, not minutes. Through a long outage the log has its
 * first failure, then a line a minute, and the reconnection (FailureStreak).
 * `clock` paces the reconnections (tests); the real one by default.
 */
export function listenForWakeups(
  url: string,
  channels: string[],
  onNotify: (channel: string) => void,
  logger: Logger,
  signal: AbortSignal,
  clock: Clock = systemClock,
): Promise<void> {
  const unique = [...new Set(channels)];
  if (unique.length === 0) return Promise.resolve();
  return (async () => {
    let failures = 0;
    const streak = new FailureStreak();
    while (!signal.aborted) {
      const client = new pg.Client({
        connectionString: url,
        application_name: 'scheduler-bot:listen',
        connectionTimeoutMillis: DB_TIMEOUTS.CONNECT_TIMEOUT_MS,
        query_timeout: DB_TIMEOUTS.QUERY_TIMEOUT_MS,
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
      });
      let lost: unknown;
      // Removed when this connection is done: one listener per attempt on the app's signal, each holding its client, was a leak through an outage.
      let onAbort = () => {};
      const closed = new Promise<void>((resolve) => {
        // `on`, not `once`: a terminated backend emits twice (the FATAL, then
        // "Connection terminated unexpectedly"), and an unheard 'error' kills the process.
        client.on('error', (error) => {
          lost ??= error;
          resolve();
        });
        client.once('end', () => resolve());
        onAbort = () => resolve();
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        await client.connect();
        client.on('notification', (n) => onNotify(n.channel));
        for (const channel of unique) await client.query(`listen ${pg.escapeIdentifier(channel)}`);
        if (failures > 0) for (const channel of unique) onNotify(channel);
        failures = 0;
        const ended = streak.succeeded(clock.now().getTime());
        if (ended) logger.info(ended, 'wake-up connection restored');
        await closed;
        if (lost !== undefined && !signal.aborted) {
          const line = streak.failed(clock.now().getTime(), 'lost');
          // Expected when the database restarts or a connection is cut: why in words, no stack.
          if (line) logger.warn({ error: lost instanceof Error ? lost.message : String(lost), ...line }, 'wake-up connection lost');
        }
      } catch (error) {
        const line = streak.failed(clock.now().getTime(), 'failed');
        if (line) logger.warn({ ...(isConnectionError(error) ? { error: error instanceof Error ? error.message : String(error) } : { err: error }), ...line }, 'wake-up connection failed');
      } finally {
        signal.removeEventListener('abort', onAbort);
        await client.end().catch(() => {});
      }
      if (signal.aborted) break;
      failures++;
      await clock.sleep(backoffAfterFailure(250, failures), signal);
    }
  })();
}
