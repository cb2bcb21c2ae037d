import { sql } from 'kysely';
import { systemClock } from '../src/clock.js';
import { NOTIFICATIONS_CHANNEL } from '../src/ledger/alert-events.js';
import { RecordingSlackApi } from '../src/replay/recording-slack-api.js';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { freshDatabase } from './lib/postgres.js';
import { spawnReplica } from './lib/replica.js';
import { seedTenants, seedWorkflows } from './lib/seed.js';
import { round, waitUntil } from './lib/stats.js';

/**
 * Benchmark 4: an alert storm at Slack's physical limit. N alerts open at
 * once across 50 channels (one root message each); the local Slack server
 * refuses a channel's second message within a second with 429 and
 * Retry-After. One whole replica drains the outbox. The theoretical minimum
 * is N / 50 seconds (one message a second per channel); reported is the
 * drain time over it, and every key's delivery count (duplicates, losses).
 */
const NAME = 'Slack drain';
const CHANNELS = 50;
const SIZES = { smoke: { notifications: 100 }, quick: { notifications: 1000 }, full: { notifications: 1000 } };
const OPENED = new Date('2026-01-01T00:00:00Z');

export async function slackDrain(ctx: BenchContext): Promise<Figure[]> {
  const { notifications } = SIZES[ctx.size];
  const minimumMs = (notifications / CHANNELS) * 1000;
  const database = await freshDatabase(ctx.adminUrl, 'drain');
  const { db, url } = database;
  const slack = await RecordingSlackApi.start({ clock: systemClock, postMessageMinIntervalMs: 1000 });
  try {
    await seedTenants(db, CHANNELS, (i) => `CDRAIN${i}`);
    await seedWorkflows(db, { count: notifications, tenants: CHANNELS, policy: { alertAfter: 1 } });
    await sql`
      insert into alerts (workflow_id, generation, status, severity, opened_at, cadence_seconds, policy, consecutive_failures,
                          last_error, error_group, error_group_first_at, error_group_last_at, error_group_count, updated_at)
      select id, 1, 'open', 'critical', ${OPENED}, 300, '{}', 1, 'connection refused', 'g1', ${OPENED}, ${OPENED}, 1, ${OPENED}
      from workflows order by id
    `.execute(db);
    await sql`
      insert into alert_events (alert_id, at, kind, data)
      select id, ${OPENED}, 'opened', '{"severity":"critical","consecutiveFailures":1}' from alerts order by id
    `.execute(db);
    const replica = spawnReplica('app', {
      DATABASE_URL: url,
      REPLICA_ID: 'bench-drain',
      PORT: '0',
      HOST: '127.0.0.1',
      SLACK_BOT_TOKEN: 'xoxb-bench',
      SLACK_SIGNING_SECRET: 'bench-signing-secret',
      SLACK_API_URL: slack.url,
    });
    let queuedAt = 0;
    try {
      await replica.ready;
      await new Promise((r) => setTimeout(r, 1000));
      // The storm: every alert's opening queued in one commit, as one evaluator batch would.
      await db.transaction().execute(async (trx) => {
        await sql`
          insert into notifications (alert_id, event_id, destination, idempotency_key, status, next_attempt_at, created_at)
          select e.alert_id, e.id, 'slack:' || t.channel, 'alert:' || e.alert_id || ':event:' || e.id || ':slack:' || t.channel, 'pending', ${OPENED}, ${OPENED}
          from alert_events e join alerts a on a.id = e.alert_id join workflows w on w.id = a.workflow_id join tenants t on t.id = w.tenant_id
          order by e.id
        `.execute(trx);
        await sql`select pg_notify(${NOTIFICATIONS_CHANNEL}, 'bench')`.execute(trx);
      });
      queuedAt = systemClock.now().getTime();
      const sent = async () => (await sql<{ n: number }>`select count(*)::int as n from notifications where status = 'sent'`.execute(db)).rows[0]!.n;
      await waitUntil(async () => (await sent()) >= notifications, minimumMs * 3 + 30_000, 100, 'outbox drained');
    } finally {
      await replica.stop();
    }
    const ok = slack.callsTo('chat.postMessage').filter((c) => c.outcome === 'ok');
    const byKey = new Map<string, number>();
    for (const c of ok) {
      const key = String(c.metadata?.event_payload.key);
      byKey.set(key, (byKey.get(key) ?? 0) + 1);
    }
    const { rows: keys } = await sql<{ key: string }>`select idempotency_key as key from notifications`.execute(db);
    const duplicates = [...byKey.values()].reduce((n, c) => n + (c - 1), 0);
    const losses = keys.filter((k) => !byKey.has(k.key)).length;
    const drainMs = Math.max(...ok.map((c) => c.at.getTime())) - queuedAt;
    const refused = slack.callsTo('chat.postMessage').filter((c) => c.outcome === 'rate_limited').length;
    const params = { notifications, channels: CHANNELS, serverLimit: '1 chat.postMessage/s per channel, 429 + Retry-After beyond', theoreticalMinimumSeconds: minimumMs / 1000, drainSeconds: round(drainMs / 1000, 1), refused429: refused };
    return [
      figure(NAME, 'drain time / theoretical minimum', round(drainMs / minimumMs, 2), 'x', params, '<= 1.1'),
      figure(NAME, 'duplicates', duplicates, 'messages', params, '<= 0'),
      figure(NAME, 'losses', losses, 'messages', params, '<= 0'),
      figure(NAME, '429 answers received', refused, 'calls', params),
    ];
  } finally {
    await slack.close();
    await database.drop();
  }
}
