import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { LoopSpec } from '../../engine/runner.js';
import { rootKey } from './alert-threads.js';
import { loadAlertCard } from '../views/alert-card-loader.js';
import { channelAudience } from './page-reach.js';
import { renderAlertRoot } from '../blocks/alert-card.js';
import { alertMetadata } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';
import { dueStorm, refreshStorm } from './storm-refresher.js';
import { nextRender } from '../../domain/render-order.js';
import { CREDENTIALS_PAUSE_MS, workspaceUpdatePace } from './update-pace.js';

/** chat.update is Tier 3 (about 50 a minute per workspace): one every 1.2 s stays under it. */
export const ROOT_UPDATE_INTERVAL_MS = 1200;

/** Resolved alerts whose roots may still need their last re-render. */
const RECENT_MS = 24 * 3_600_000;

/**
 * Keeps each thread's root showing the alert's current state. A root needs a
 * re-render when a notification newer than what it was rendered from has been
 * delivered in its thread (so the header never runs ahead of the replies).
 * Re-rendering reads current state, so however many events queued up, one
 * chat.update covers them all: that is the coalescing.
 *
 * Claiming is a compare-and-set on alert_threads.rendered_event_id: only one
 * replica wins a given re-render. A failed update puts the old value back so
 * it is tried again; a crash between the two leaves the root one state behind
 * until the next event. The pace (and a 429's Retry-After) is the
 * workspace's, kept in the database for every replica (update-pace.ts).
 */
export function createRootRefresher(deps: Pick<Deps, 'db' | 'clock' | 'logger' | 'launchers'> & { config?: Pick<Deps['config'], 'PLATFORM_CHANNEL'> }, api: SlackOutboxApi, options: { intervalMs?: number; minIntervalMs?: number } = {}) {
  const minInterval = options.minIntervalMs ?? (api.mode === 'console' ? 0 : ROOT_UPDATE_INTERVAL_MS);
  const pace = workspaceUpdatePace(deps.db, minInterval);
  const log = deps.logger.child({ loop: 'slack-root-refresher' });

  async function tick(): Promise<boolean> {
    const now = deps.clock.now();
    if (!pace.ready(now)) return false;
    // Storm messages and roots at one pace, whichever's newest undisplayed event is oldest first (src/domain/render-order.ts).
    const dueRender = await dueStorm(deps, now);
    const due = await sql<{ alertId: number; destination: string; channel: string; rootTs: string; renderedEventId: number | null; target: number }>`
      select t.alert_id, t.destination, t.channel, t.root_ts, t.rendered_event_id, x.target
      from alert_threads t
      join alerts a on a.id = t.alert_id
      cross join lateral (
        select max(n.event_id) as target from notifications n
        where n.alert_id = t.alert_id and n.destination = t.destination and n.status = 'sent'
      ) x
      where x.target > coalesce(t.rendered_event_id, 0)
        and (a.status = 'open' or a.resolved_at > ${new Date(now.getTime() - RECENT_MS)})
      order by x.target
      limit 1
    `.execute(deps.db);
    const thread = due.rows[0];
    const choice = nextRender(dueRender && { target: Number(dueRender.target ?? dueRender.renderedEventId ?? 0) }, thread && { target: Number(thread.target) });
    // A storm no longer due once loaded (its view gone) leaves the slot to the root.
    const storm = choice === 'storm' ? await refreshStorm(deps, api, dueRender!, now, log, () => pace.take(now)) : undefined;
    if (storm) {
      if (storm.retryAfterMs !== undefined) await pace.hold(storm.retryAfterMs, now);
      return storm.updated;
    }
    if (!thread) return false;
    const loaded = await loadAlertCard(deps.db, deps.launchers, Number(thread.alertId));
    if (!loaded) return false;
    if (!(await pace.take(now))) return false;
    const previous = thread.renderedEventId === null ? null : Number(thread.renderedEventId);
    const rendered = Math.max(loaded.eventId, Number(thread.target));
    const won = await deps.db
      .updateTable('alertThreads')
      .set({ renderedEventId: rendered })
      .where('alertId', '=', Number(thread.alertId))
      .where('destination', '=', thread.destination)
      .where((eb) => (previous === null ? eb('renderedEventId', 'is', null) : eb('renderedEventId', '=', previous)))
      .executeTakeFirst();
    if (Number(won.numUpdatedRows) === 0) return true;

    const card = { ...loaded.card, audience: channelAudience(deps.config, String(thread.channel)) };
    const message = renderAlertRoot(card, now);
    const key = await rootKey(deps.db, card.alert.id, thread.destination, thread.rootTs);
    const metadata = key
      ? alertMetadata({ alertId: card.alert.id, tenant: card.tenant.id, workflow: card.workflow.name, event: 'opened', severity: card.alert.severity, key })
      : undefined;
    const result = await api.updateMessage({ channel: thread.channel, ts: thread.rootTs, ...message, metadata });
    if (result.ok) return true;
    if (result.kind === 'permanent') {
      log.error({ alertId: card.alert.id, destination: thread.destination, error: result.error }, 'root cannot be updated');
      return true;
    }
    if (result.kind === 'rate_limited') await pace.hold(result.retryAfterMs, now);
    // A refused token is the workspace's state (the outbox holds and probes it): the root keeps its due re-render, tried again a minute on, not in a loop.
    if (result.kind === 'credentials') await pace.hold(CREDENTIALS_PAUSE_MS, now);
    log.warn({ alertId: card.alert.id, destination: thread.destination, error: result.error }, 'root update failed; will retry');
    await deps.db
      .updateTable('alertThreads')
      .set({ renderedEventId: previous })
      .where('alertId', '=', Number(thread.alertId))
      .where('destination', '=', thread.destination)
      .where('renderedEventId', '=', rendered)
      .execute();
    return false;
  }

  const loop: LoopSpec = { name: 'slack-root-refresher', intervalMs: options.intervalMs ?? 500, tick, wakeOn: [] };
  return { tick, loop };
}
