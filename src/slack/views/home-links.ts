import type { Db } from '../../db/connect.js';

/** Where an alert is discussed in Slack: a message to link to. */
export interface ThreadLink {
  channel: string;
  ts: string;
}

/**
 * The thread each open alert on the App Home links to, from what the bot
 * stored when it posted (alert_threads, a storm's message): no Slack call,
 * two queries for the whole Home. Preferred: the alert's own thread in its
 * tenant's channel, then its storm message there, then either in another
 * channel (the platform channel's thread, when the tenant's post went dead
 * or the tenant has no channel). None when nothing was posted yet (or in
 * console mode, where nothing is).
 */
export async function homeThreadLinks(db: Db, alerts: readonly { id: number; tenantChannel: string | null }[]): Promise<Map<number, ThreadLink>> {
  const links = new Map<number, ThreadLink>();
  if (alerts.length === 0) return links;
  const ids = alerts.map((a) => a.id);
  const own = await db.selectFrom('alertThreads').select(['alertId', 'channel', 'rootTs']).where('alertId', 'in', ids).where('destination', 'like', 'slack:%').orderBy('alertId').orderBy('channel').execute();
  const storms = await db
    .selectFrom('stormAlerts as sa')
    .innerJoin('storms as s', 's.id', 'sa.stormId')
    .select(['sa.alertId', 's.channel', 's.rootTs'])
    .where('sa.alertId', 'in', ids)
    .where('s.rootTs', 'is not', null)
    .orderBy('sa.alertId')
    .orderBy('s.id', 'desc')
    .execute();
  const candidates = [...own.map((r) => ({ ...r, storm: 0 })), ...storms.map((r) => ({ ...r, storm: 1 }))];
  for (const alert of alerts) {
    const rank = (c: { channel: string; storm: number }) => (c.channel === alert.tenantChannel ? 0 : 2) + c.storm;
    const best = candidates.filter((c) => c.alertId === alert.id && c.rootTs).sort((a, b) => rank(a) - rank(b))[0];
    if (best) links.set(alert.id, { channel: best.channel, ts: best.rootTs! });
  }
  return links;
}
