import pg from 'pg';
import type { Logger } from '../log.js';
import { systemClock } from '../clock.js';
import { DB_TIMEOUTS } from '../db/connect.js';
import { backoffAfterFailure } from './runner.js';

/**
 * One dedicated connection per process that LISTENs on the given channels and
 * calls `onNotify(channel)` for each NOTIFY. Wake-ups are an optimisation: when
 * the connection drops (Postgres restart), it reconnects with back-off and
 * fires every channel once, since notifications may have been missed meanwhile.
 * The back-off is the loops' own (a few seconds at most, jittered), and the
 * connect and LISTEN statements time out, so a restart of the server costs
 * wake-ups for seconds, not minutes.
 */
export function listenForWakeups(
  url: string,
  channels: string[],
  onNotify: (channel: string) => void,
  logger: Logger,
  signal: AbortSignal,
): Promise<void> {
  const unique = [...new Set(channels)];
  if (unique.length === 0) return Promise.resolve();
  return (async () => {
    let failures = 0;
    while (!signal.aborted) {
      const client = new pg.Client({
        connectionString: url,
        application_name: 'scheduler-bot:listen',
        connectionTimeoutMillis: DB_TIMEOUTS.CONNECT_TIMEOUT_MS,
        query_timeout: DB_TIMEOUTS.QUERY_TIMEOUT_MS,
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
      });
      const closed = new Promise<void>((resolve) => {
        // `on`, not `once`: a terminated backend emits twice (the FATAL, then
        // "Connection terminated unexpectedly"), and an unheard 'error' kills the process.
        client.on('error', (error) => {
          logger.warn({ err: error }, 'wake-up connection lost');
          resolve();
        });
        client.once('end', () => resolve());
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      try {
        await client.connect();
        client.on('notification', (n) => onNotify(n.channel));
        for (const channel of unique) await client.query(`listen ${pg.escapeIdentifier(channel)}`);
        if (failures > 0) for (const channel of unique) onNotify(channel);
        failures = 0;
        await closed;
      } catch (error) {
        logger.warn({ err: error }, 'wake-up connection failed');
      } finally {
        await client.end().catch(() => {});
      }
      if (signal.aborted) break;
      failures++;
      await systemClock.sleep(backoffAfterFailure(250, failures), signal);
    }
  })();
}
