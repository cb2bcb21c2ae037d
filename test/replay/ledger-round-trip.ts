import type { Db } from '../../src/db/connect.js';
import { scenarioFromLedger } from '../../src/replay/from-ledger.js';
import { replayScenario } from '../../src/replay/replay-scenario.js';
import { checkScenario, type ScenarioInput } from '../../src/replay/scenario.js';
import { createTestDatabase } from '../helpers/db.js';

/**
 * The replay's fidelity, end to end: a period is lived through the real
 * engine on a manual clock (the replay's virtual driver: the tick scheduler,
 * the ingest service for observed workflows, retries, the freshness detector,
 * the evaluator, the escalation clock), its ledger is turned back into a
 * scenario by `replay --from-db` and replayed under the same policy. The
 * alerts and their events must come out the same: opened, escalated and
 * resolved at the same instants, with the same severities and versions.
 */

export async function alertStory(db: Db) {
  const alerts = await db
    .selectFrom('alerts')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .select(['workflows.name', 'alerts.severity', 'alerts.openedAt', 'alerts.resolvedAt', 'alerts.escalatedAt', 'alerts.policyVersion'])
    .orderBy('alerts.openedAt')
    .orderBy('alerts.id')
    .execute();
  const events = await db
    .selectFrom('alertEvents')
    .innerJoin('alerts', 'alerts.id', 'alertEvents.alertId')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .select(['workflows.name', 'alertEvents.kind', 'alertEvents.at', 'alertEvents.policyVersion'])
    .orderBy('alertEvents.at')
    .orderBy('alertEvents.id')
    .execute();
  const told = await db
    .selectFrom('notifications')
    .innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId')
    .select(['alertEvents.kind', 'notifications.destination'])
    .orderBy('notifications.id')
    .execute();
  return {
    told: [...new Set(told.map((n) => `${n.kind} → ${n.destination}`))].sort(),
    alerts: alerts.map((a) => `${a.name} ${a.severity} opened ${a.openedAt.toISOString()} escalated ${a.escalatedAt?.toISOString() ?? '-'} resolved ${a.resolvedAt?.toISOString() ?? '-'} v${a.policyVersion}`),
    events: events.map((e) => `${e.at.toISOString()} ${e.name} ${e.kind} v${e.policyVersion}`),
  };
}

export type Story = Awaited<ReturnType<typeof alertStory>>;

/** Lives `input` through the engine, then replays its ledger from `window` (default the whole of it) under the same policy. */
export async function roundTrip(input: ScenarioInput, tenant: string, window?: { since: string; until?: string }) {
  const live = await createTestDatabase();
  let lived: Story;
  let ledger: Awaited<ReturnType<typeof scenarioFromLedger>>;
  try {
    await replayScenario(checkScenario(input), { db: live.db });
    lived = await alertStory(live.db);
    ledger = await scenarioFromLedger(live.db, { tenant, ...(input.platformChannel ? { platformChannel: input.platformChannel } : {}), since: new Date(window?.since ?? (input.start as string)), until: new Date(window?.until ?? (input.until as string)) });
  } finally {
    await live.drop();
  }
  const again = await createTestDatabase();
  try {
    await replayScenario(checkScenario(ledger.scenario), { db: again.db });
    return { lived, replayed: await alertStory(again.db), ...ledger };
  } finally {
    await again.drop();
  }
}
