import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { stormKey } from '../../domain/storm.js';
import type { Logger } from '../../log.js';
import { renderStormMessage } from '../blocks/storm-message.js';
import { stormMetadata } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';
import { loadStormView } from '../views/storm-queries.js';
import { CREDENTIALS_PAUSE_MS } from './update-pace.js';

/** Ended storms whose message may still need its last re-render. */
const RECENT_MS = 24 * 3_600_000;

/**
 * One storm message re-rendered in place, the way the root refresher does
 * roots (and sharing its pace: it is called from that loop's tick): due when
 * a member's event newer than what the message shows has been delivered in
 * that channel, or the storm ended after its last render. Claimed by a
 * compare-and-set on storms.rendered_event_id, put back when the update fails.
 * `dueStorm` finds the one due first, `refreshStorm` renders it; undefined
 * when it is no longer due.
 */
export type DueStorm = { id: number; channel: string; destination: string; rootTs: string; renderedEventId: number | null; target: number | null };

export async function dueStorm(deps: Pick<Deps, 'db'>, now: Date): Promise<DueStorm | undefined> {
  const due = await sql<DueStorm>`
    select s.id, s.channel, s.destination, s.root_ts, s.rendered_event_id, x.target
    from storms s
    cross join lateral (
      select max(n.event_id) as target from storm_alerts m
      join notifications n on n.alert_id = m.alert_id and n.destination = m.destination and n.status = 'sent'
      where m.storm_id = s.id
    ) x
    where s.root_ts is not null
      and (s.ended_at is null or s.ended_at > ${new Date(now.getTime() - RECENT_MS)})
      and (x.target > coalesce(s.rendered_event_id, 0) or (s.ended_at is not null and (s.rendered_at is null or s.rendered_at < s.ended_at)))
    order by x.target
    limit 1`.execute(deps.db);
  return due.rows[0];
}

export async function refreshStorm(
  deps: Pick<Deps, 'db'>,
  api: SlackOutboxApi,
  storm: DueStorm,
  now: Date,
  log: Logger,
  /** The workspace's chat.update slot (the root refresher's pace); false: not now, nothing done. */
  takeSlot: () => Promise<boolean>,
): Promise<{ updated: boolean; retryAfterMs?: number } | undefined> {
  const id = Number(storm.id);
  const view = await loadStormView(deps.db, id, now);
  if (!view) return undefined;
  if (!(await takeSlot())) return { updated: false };
  const previous = storm.renderedEventId === null ? null : Number(storm.renderedEventId);
  const rendered = Math.max(view.eventId, Number(storm.target ?? 0), previous ?? 0);
  const won = await deps.db
    .updateTable('storms')
    .set({ renderedEventId: rendered, renderedAt: now })
    .where('id', '=', id)
    .where((eb) => (previous === null ? eb('renderedEventId', 'is', null) : eb('renderedEventId', '=', previous)))
    .where((eb) => eb.or([eb('renderedAt', 'is', null), eb('renderedAt', '<=', now)]))
    .executeTakeFirst();
  if (Number(won.numUpdatedRows) === 0) return { updated: false };
  const result = await api.updateMessage({ channel: storm.channel, ts: storm.rootTs, ...renderStormMessage(view), metadata: stormMetadata(view, stormKey(id, storm.destination)) });
  if (result.ok) return { updated: true };
  if (result.kind === 'permanent') {
    log.error({ stormId: id, error: result.error }, 'storm message cannot be updated');
    return { updated: true };
  }
  log.warn({ stormId: id, error: result.error }, 'storm message update failed; will retry');
  await deps.db.updateTable('storms').set({ renderedEventId: previous, renderedAt: null }).where('id', '=', id).where('renderedEventId', '=', rendered).execute();
  return { updated: false, retryAfterMs: result.kind === 'rate_limited' ? result.retryAfterMs : result.kind === 'credentials' ? CREDENTIALS_PAUSE_MS : undefined };
}
