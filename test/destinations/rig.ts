import { ManualClock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config/env.js';
import type { DestinationSpec } from '../../src/config/workflows-file.js';
import type { Db } from '../../src/db/connect.js';
import type { AlertsTable } from '../../src/db/schema.js';
import type { AlertEventKind } from '../../src/domain/events.js';
import { silentLogger } from '../../src/log.js';
import { createOutboxSender, type SenderOptions } from '../../src/notify/sender.js';
import { destinationTransports } from '../../src/notify/transports/index.js';
import { recordAlertEvent } from '../../src/ledger/alert-events.js';
import { withDestinationIdKey } from '../../src/ledger/destination-id-key.js';
import { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';
import { createRootRefresher } from '../../src/slack/transport/root-refresher.js';
import { createWebClient, webOutboxApi } from '../../src/slack/transport/slack-api.js';
import { slackTransport } from '../../src/slack/transport/slack-transport.js';
import type { Insertable } from 'kysely';
import { T0 } from '../helpers/factories.js';
import { HttpReceiver } from './http-receiver.js';
import { SmtpSink } from './smtp-sink.js';

export const WEBHOOK_SECRET = 'whsec_0123456789abcdef';
export const ROUTING_KEY = 'R0UT1NGKEY0123456789ABCDEFGHIJKL';

export interface DestinationRig {
  clock: ManualClock;
  config: Config;
  slack: RecordingSlackApi;
  smtp: SmtpSink;
  webhook: HttpReceiver;
  pagerduty: HttpReceiver;
  /** A tenant's destinations pointing at this rig's receivers. */
  destinations(options?: { email?: Partial<DestinationSpec>; webhook?: Partial<DestinationSpec>; pagerduty?: Partial<DestinationSpec> | false }): DestinationSpec[];
  sender: ReturnType<typeof createOutboxSender>;
  /** Ticks the sender (and Slack's root refresher) until the outbox is empty, moving the clock while idle. */
  drain(options?: { maxClockMs?: number; stepMs?: number }): Promise<void>;
  close(): Promise<void>;
}

export async function startDestinationRig(db: Db, options: { start?: Date; clock?: ManualClock; sender?: SenderOptions; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<DestinationRig> {
  const clock = options.clock ?? new ManualClock(options.start ?? T0);
  // Pacing slots are shared through the database; a rig's clock may start earlier than the last rig's ended.
  await db.deleteFrom('paceSlots').execute();
  const slack = await RecordingSlackApi.start({ clock });
  const smtp = await SmtpSink.start();
  const webhook = await HttpReceiver.start();
  const pagerduty = await HttpReceiver.start({ status: 202, body: '{"status":"success","message":"Event processed"}' });
  const config = await withDestinationIdKey(
    db,
    loadConfig({
      LOG_LEVEL: 'silent',
      SMTP_URL: smtp.url,
      SMTP_FROM: 'scheduler-bot <alerts@scheduler.example.com>',
      EVENTS_API_URL: `${pagerduty.url}/v2/enqueue`,
      PUBLIC_URL: 'https://scheduler.example.com',
      ...options.env,
    }),
  );
  const api = webOutboxApi(createWebClient('xoxb-test-token', { apiUrl: slack.url, timeoutMs: 2000, logger: silentLogger }));
  const deps = { db, clock, config, logger: silentLogger, replicaId: 'dest-replica', launchers: () => undefined };
  const sender = createOutboxSender(deps, [slackTransport(deps, api), ...destinationTransports(deps, { timeoutMs: options.timeoutMs ?? 2000 })], { baseBackoffMs: 1000, ...options.sender });
  const refresher = createRootRefresher(deps, api);

  async function drain({ maxClockMs = 60 * 60_000, stepMs = 500 } = {}) {
    const start = clock.now().getTime();
    for (;;) {
      const a = await sender.tick();
      const b = await refresher.tick();
      if (a || b) continue;
      const open = await db
        .selectFrom('notifications')
        .select([(eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('nextAttemptAt').as('due')])
        .where('status', 'in', ['pending', 'sending'])
        .executeTakeFirstOrThrow();
      if (Number(open.n) === 0) return;
      if (clock.now().getTime() - start > maxClockMs) throw new Error(`outbox not drained after ${maxClockMs} ms of clock time: ${open.n} open rows`);
      // Events recorded ahead of the clock: jump to the first due row rather than step there.
      const due = open.due ? new Date(open.due).getTime() : 0;
      if (due > clock.now().getTime() + stepMs) clock.set(new Date(due));
      else clock.advance(stepMs);
    }
  }

  return {
    clock,
    config,
    slack,
    smtp,
    webhook,
    pagerduty,
    sender,
    drain,
    destinations(o = {}) {
      const list: DestinationSpec[] = [
        { kind: 'email', to: ['oncall@acme.example.com'], ...o.email } as DestinationSpec,
        { kind: 'webhook', url: `${webhook.url}/hooks/scheduler`, secret: WEBHOOK_SECRET, ...o.webhook } as DestinationSpec,
      ];
      if (o.pagerduty !== false) list.push({ kind: 'pagerduty', routingKey: ROUTING_KEY, ...o.pagerduty } as DestinationSpec);
      return list;
    },
    async close() {
      await Promise.all([slack.close(), smtp.close(), webhook.close(), pagerduty.close()]);
    },
  };
}

/** Records an event the way the engine does (after applying `changes` to the alert), with the rig's routing config. */
export async function recordEvent(
  db: Db,
  config: Config,
  alertId: number,
  kind: AlertEventKind,
  options: { now: Date; changes?: Partial<Insertable<AlertsTable>>; data?: Record<string, unknown>; actor?: string },
) {
  return db.transaction().execute(async (trx) => {
    const alert = options.changes
      ? await trx.updateTable('alerts').set(options.changes).where('id', '=', alertId).returningAll().executeTakeFirstOrThrow()
      : await trx.selectFrom('alerts').selectAll().where('id', '=', alertId).executeTakeFirstOrThrow();
    const wf = await trx.selectFrom('workflows').select('tenantId').where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
    const tenant = await trx.selectFrom('tenants').select('channel').where('id', '=', wf.tenantId).executeTakeFirstOrThrow();
    return recordAlertEvent(trx, { alert, tenant, kind, actor: options.actor ?? null, data: options.data ?? {}, now: options.now, config });
  });
}

/** What a destinations test writes, children first: emptied after each test so the next one's rig starts on a clean ledger. */
const WRITTEN_TABLES = ['notifications', 'alertThreads', 'destinationOutages', 'destinationRefusals', 'alertEvents', 'alerts', 'runs', 'workflows', 'tenants'] as const;

/** After each test of a file that shares one database: its rig closed, and the tables it wrote emptied. */
export async function endDestinationTest(db: Db, rig: DestinationRig | undefined): Promise<void> {
  await rig?.close();
  for (const table of WRITTEN_TABLES) await db.deleteFrom(table).execute();
}
