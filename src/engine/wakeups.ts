import pg from 'pg';
import type { Logger } from '../log.js';
import { systemClock } from '../clock.js';

/**
 * One dedicated connection per process that LISTENs on the given channels and
 * calls `onNotify(channel)` for each NOTIFY. Wake-ups are an optimisation: when
 * the connection drops (Postgres restart), it reconnects with back-off and
 * fires every channel once, since notifications may have been missed meanwhile.
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
      const client = new pg.Client({ connectionString: url, application_name: 'scheduler-bot:listen' });
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
      await systemClock.sleep(Math.min(30_000, 250 * 2 ** Math.min(failures, 7)), signal);
    }
  })();
}
