import { sql, type Insertable } from 'kysely';
import { ManualClock } from '../../src/clock.js';
import type { Db } from '../../src/db/connect.js';
import type { Alert, AlertsTable } from '../../src/db/schema.js';
import type { AlertEventKind } from '../../src/domain/events.js';
import { silentLogger } from '../../src/log.js';
import { createOutboxSender, type SenderOptions } from '../../src/notify/sender.js';
import { recordAlertEvent } from '../../src/ledger/alert-events.js';
import { createRootRefresher } from '../../src/slack/transport/root-refresher.js';
import { createWebClient, webOutboxApi, type SlackOutboxApi } from '../../src/slack/transport/slack-api.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import { RecordingSlackApi, type RecordingSlackApiOptions } from '../../src/replay/recording-slack-api.js';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from './db.js';
import { makeTenant, T0 } from './factories.js';

/** An alert row as the engine would have opened it. */
export async function insertAlert(db: Db, workflowId: number, overrides: Partial<Insertable<AlertsTable>> = {}): Promise<Alert> {
  const generation = await db
    .selectFrom('alerts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workflowId', '=', workflowId)
    .executeTakeFirstOrThrow();
  return db
    .insertInto('alerts')
    .values({
      workflowId,
      generation: Number(generation.n) + 1,
      status: 'open',
      severity: 'warning',
      openedAt: T0,
      escalateAt: new Date(T0.getTime() + 3 * 300_000),
      cadenceSeconds: 300,
      policy: JSON.stringify({}),
      consecutiveFailures: 3,
      lastError: 'connection refused',
      errorGroup: 'g1',
      updatedAt: T0,
      ...overrides,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Records an event (and its outbox rows) the way the engine does, after applying `changes` to the alert.
 * Storms are off unless `storms` is set: these tests pin the outbox's delivery of each alert on its own
 * (an operator may turn storms off the same way, STORM_MIN_ALERTS=0); storms have tests of their own.
 */
export async function addEvent(
  db: Db,
  alertId: number,
  kind: AlertEventKind,
  options: { now: Date; platformChannel?: string; changes?: Partial<Insertable<AlertsTable>>; data?: Record<string, unknown>; actor?: string; storms?: boolean },
) {
  return db.transaction().execute(async (trx) => {
    const alert = options.changes
      ? await trx.updateTable('alerts').set(options.changes).where('id', '=', alertId).returningAll().executeTakeFirstOrThrow()
      : await trx.selectFrom('alerts').selectAll().where('id', '=', alertId).executeTakeFirstOrThrow();
    const wf = await trx.selectFrom('workflows').select('tenantId').where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
    const tenant = await trx.selectFrom('tenants').select('channel').where('id', '=', wf.tenantId).executeTakeFirstOrThrow();
    return recordAlertEvent(trx, {
      alert,
      tenant,
      kind,
      actor: options.actor ?? null,
      data: options.data ?? {},
      now: options.now,
      config: { PLATFORM_CHANNEL: options.platformChannel, ...(options.storms ? {} : { STORM_MIN_ALERTS: 0 }) },
    });
  });
}

export interface OutboxRig {
  clock: ManualClock;
  slack: RecordingSlackApi;
  api: SlackOutboxApi;
  sender: ReturnType<typeof createOutboxSender>;
  refresher: ReturnType<typeof createRootRefresher>;
  /** Ticks sender and refresher until nothing is left to do, moving the clock when both are idle. */
  drain(options?: { maxClockMs?: number; stepMs?: number }): Promise<void>;
  close(): Promise<void>;
}

export async function startOutboxRig(
  db: Db,
  options: { server?: Partial<RecordingSlackApiOptions>; sender?: SenderOptions; timeoutMs?: number; start?: Date } = {},
): Promise<OutboxRig> {
  const clock = new ManualClock(options.start ?? T0);
  const slack = await RecordingSlackApi.start({ clock, ...options.server });
  const client = createWebClient('xoxb-test-token', { apiUrl: slack.url, timeoutMs: options.timeoutMs ?? 2000, logger: silentLogger });
  const api = webOutboxApi(client);
  const deps = { db, clock, logger: silentLogger, replicaId: 'test-replica', launchers: () => undefined };
  const sender = createOutboxSender(deps, [slackTransport(deps, api)], options.sender);
  const refresher = createRootRefresher(deps, api);
  /**
   * Where an idle drain moves the clock: to the first instant anything can
   * happen (a row comes due, a channel's pace frees), rather than in small
   * steps through minutes in which nothing can (2,000 idle rounds of queries
   * took 45 s on a loaded machine). `stepMs` bounds the jump while a root
   * waits for the refresher, whose pace this rig does not see.
   */
  async function nextInstant(stepMs: number | undefined): Promise<Date> {
    const now = clock.now();
    const due = await db.selectFrom('notifications').select((eb) => eb.fn.min('nextAttemptAt').as('at')).where('status', 'in', ['pending', 'sending']).where('nextAttemptAt', '>', now).executeTakeFirstOrThrow();
    const candidates = [due.at ? new Date(due.at).getTime() : undefined, sender.pacer.nextFreeAfter(now)?.getTime(), stepMs === undefined ? undefined : now.getTime() + stepMs].filter((t): t is number => t !== undefined);
    // Nothing known ahead (a slot held by the database only): a small step, as before.
    return new Date(candidates.length > 0 ? Math.min(...candidates) : now.getTime() + 250);
  }

  async function drain({ maxClockMs = 30 * 60_000, stepMs = 250 } = {}) {
    const start = clock.now().getTime();
    for (;;) {
      const a = await sender.tick();
      const b = await refresher.tick();
      if (a || b) continue;
      const { open, stale } = await outboxBacklog(db);
      if (open === 0 && stale === 0) return;
      if (clock.now().getTime() - start > maxClockMs) throw new Error(`outbox not drained after ${maxClockMs} ms of clock time: ${open} open rows, ${stale} stale roots`);
      clock.set(await nextInstant(stale > 0 ? stepMs : undefined));
    }
  }
  return { clock, slack, api, sender, refresher, drain, close: () => slack.close() };
}

/**
 * What the outbox still owes Slack: rows not yet settled (optionally only those
 * due before `dueBefore`), and thread roots not yet re-rendered from their
 * newest sent event. Both zero means every message and root update is out.
 */
export async function outboxBacklog(db: Db, options: { dueBefore?: Date } = {}): Promise<{ open: number; stale: number }> {
  const open = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', 'in', ['pending', 'sending'])
    .$if(!!options.dueBefore, (q) => q.where('nextAttemptAt', '<=', options.dueBefore!))
    .executeTakeFirstOrThrow();
  const stale = await db
    .selectFrom('alertThreads as t')
    .select('t.alertId')
    .where((eb) =>
      eb(
        eb.selectFrom('notifications as n').select((e) => e.fn.max('n.eventId').as('m')).whereRef('n.alertId', '=', 't.alertId').whereRef('n.destination', '=', 't.destination').where('n.status', '=', 'sent'),
        '>',
        eb.fn.coalesce('t.renderedEventId', eb.lit(0)),
      ),
    )
    .execute();
  // Storm messages (issue 16) owe a re-render the same way: a member event newer than the render, or an end not shown yet.
  const staleStorms = await sql<{ n: number }>`
    select count(*)::int as n from storms s
    where s.root_ts is not null and (
      (s.ended_at is not null and (s.rendered_at is null or s.rendered_at < s.ended_at))
      or coalesce(s.rendered_event_id, 0) < (select max(n.event_id) from storm_alerts m join notifications n on n.alert_id = m.alert_id and n.destination = m.destination and n.status = 'sent' where m.storm_id = s.id))`.execute(db);
  return { open: Number(open.n), stale: stale.length + (staleStorms.rows[0]?.n ?? 0) };
}

/** What the outbox tests empty after each test: the outbox, its threads, events and alerts, and the pace and outage state shared through the database (every test's clock starts again at T0). */
const OUTBOX_TABLES = ['notifications', 'alertThreads', 'alertEvents', 'alerts', 'paceSlots', 'destinationOutages', 'destinationRefusals'] as const;

/**
 * The outbox test files' life cycle: one database for the file with its
 * tenants (acme on CACME unless told), handed over by `database`; after each
 * test `closeRig` and the outbox tables emptied; the database dropped at the end.
 */
export function outboxTestHooks(hooks: {
  database: (t: TestDatabase) => void;
  closeRig: () => Promise<void>;
  tenants?: { id: string; name: string; channel: string }[];
}): void {
  let t: TestDatabase | undefined;
  beforeAll(async () => {
    t = await createTestDatabase();
    hooks.database(t);
    for (const tenant of hooks.tenants ?? [{ id: 'acme', name: 'Acme', channel: 'CACME' }]) await makeTenant(t.db, tenant);
  });
  afterAll(() => t?.drop());
  afterEach(async () => {
    await hooks.closeRig();
    for (const table of OUTBOX_TABLES) await t!.db.deleteFrom(table).execute();
  });
}
