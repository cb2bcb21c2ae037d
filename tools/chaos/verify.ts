import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { isNotifiedKind, rowKeyOf } from '../../src/domain/events.js';
import { stormKey } from '../../src/domain/storm.js';
import type { RecordingSlackApi, StoredMessage } from '../../src/replay/recording-slack-api.js';
import { countUnevaluated } from './postgres-handle.js';
import { EXPECTED_STORY, type Workload } from './workload.js';

/**
 * The end-of-scenario audit: the ledger and the Slack server's log against
 * what the driver did. Every count here is a finding when it is not zero
 * (`dead` too: a revoked token holds the workspace, it kills no row).
 */
export interface Verdict {
  runs: number;
  /** Finished runs the engine never evaluated. */
  unevaluated: number;
  /** Notification keys that must be in Slack: every notified event's row per destination. */
  expected: number;
  delivered: number;
  duplicated: number;
  lost: number;
  /** Rows that went dead (permanent Slack errors: none of the scenarios answers one); shown on the App Home, not silently dropped. */
  dead: number;
  /** Workflows with more alerts than their story has. */
  alertsOpenedTwice: number;
  /** Managed ticks (or retry attempts) launched more than once. */
  ticksFiredTwice: number;
  /** Alerts whose notified events differ from the script's story. */
  storyMismatches: string[];
  /** Replies out of event order in their thread. */
  misordered: number;
}

const KEY = /^alert:(\d+):event:(\d+):(.+)$/;

export async function verifyScenario(db: Db, slack: RecordingSlackApi, workload: Workload, launchLog: string, settledAt: Date): Promise<Verdict> {
  const runs = await db.selectFrom('runs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const unevaluated = await countUnevaluated(db);

  // Expected keys: every outbox row of a notified event (held-then-summarised rows are 'skipped' by design).
  const rows = await db
    .selectFrom('notifications')
    .innerJoin('alertEvents', 'alertEvents.id', 'notifications.eventId')
    .select(['notifications.idempotencyKey', 'notifications.status', 'notifications.destination', 'notifications.result', 'notifications.createdAt', 'alertEvents.kind'])
    .execute();
  // A row written after the bot settled (an open alert escalating during the audit) is still on its way, not lost.
  const expectedRows = rows.filter((r) => isNotifiedKind(r.kind) && r.status !== 'skipped' && r.createdAt <= settledAt);
  // Each message key once: a row's own, its own reply's under the root it posted (ownReplyKey), a storm message's.
  const seen = new Map<string, number>();
  for (const m of slack.messages()) {
    const key = keyOf(m);
    if (key) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const storms = await db.selectFrom('storms').select(['id', 'destination']).where('rootTs', 'is not', null).execute();
  let delivered = 0;
  let lost = 0;
  let dead = 0;
  for (const r of expectedRows) {
    // A storm member's event is told by re-rendering the storm message (docs/alerts.md "Storms"): delivered if that message is in Slack.
    const storm = (r.result as { storm?: number } | null)?.storm;
    const n = (seen.get(r.idempotencyKey) ?? 0) + (storm === undefined ? 0 : (seen.get(stormKey(storm, r.destination)) ?? 0));
    if (n > 0) delivered++;
    else if (r.status === 'dead') dead++;
    else lost++;
  }
  const known = new Set([...rows.map((r) => r.idempotencyKey), ...storms.map((s) => stormKey(Number(s.id), s.destination))]);
  let duplicated = 0;
  for (const [key, n] of seen) duplicated += known.has(rowKeyOf(key)) ? n - 1 : n; // a key the ledger never wrote is a duplicate of nothing: count it

  const { alertsOpenedTwice, storyMismatches } = await storyChecks(db, workload);

  return {
    runs: Number(runs.n),
    unevaluated,
    expected: expectedRows.length,
    delivered,
    duplicated,
    lost,
    dead,
    alertsOpenedTwice,
    ticksFiredTwice: (await launchesTwice(launchLog)) + (await originalsTwice(db)),
    storyMismatches,
    misordered: misorderedThreads(slack),
  };
}

/** Per scripted workflow, its alerts and their notified events in order against the story its pattern expects; and alerts opened twice. */
async function storyChecks(db: Db, workload: Workload): Promise<{ alertsOpenedTwice: number; storyMismatches: string[] }> {
  const stories = await db
    .selectFrom('alerts')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .innerJoin('alertEvents', 'alertEvents.alertId', 'alerts.id')
    .select(['workflows.tenantId', 'workflows.name', 'alerts.id as alertId', 'alertEvents.kind'])
    .orderBy('alertEvents.id')
    .execute();
  const byWorkflow = new Map<string, Map<number, string[]>>();
  for (const s of stories) {
    const key = `${s.tenantId}/${s.name}`;
    const alerts = byWorkflow.get(key) ?? new Map<number, string[]>();
    byWorkflow.set(key, alerts);
    const kinds = alerts.get(Number(s.alertId)) ?? [];
    alerts.set(Number(s.alertId), kinds);
    if (isNotifiedKind(s.kind)) kinds.push(s.kind);
  }
  let alertsOpenedTwice = 0;
  const storyMismatches: string[] = [];
  for (const w of workload.scripted) {
    const alerts = [...(byWorkflow.get(`${w.tenant}/${w.name}`)?.values() ?? [])];
    const story = EXPECTED_STORY[w.pattern];
    const wanted = story ? 1 : 0;
    if (alerts.length > wanted) alertsOpenedTwice++;
    if (alerts.length < wanted) storyMismatches.push(`${w.tenant}/${w.name} (${w.pattern}): no alert`);
    if (story && alerts.length === 1 && !matchesStory(alerts[0]!, story)) storyMismatches.push(`${w.tenant}/${w.name} (${w.pattern}): ${alerts[0]!.join(' → ')}`);
  }
  for (const w of workload.scheduled) {
    const open = await sql<{ n: number }>`
      select count(*)::int as n from alerts a join workflows w on w.id = a.workflow_id
      where w.tenant_id = ${w.tenant} and w.name = ${w.name} and a.status = 'open'
    `.execute(db);
    if ((open.rows[0]?.n ?? 0) > 1) alertsOpenedTwice++;
  }
  return { alertsOpenedTwice, storyMismatches };
}

function keyOf(m: StoredMessage): string | undefined {
  const key = m.metadata?.event_payload?.key;
  return typeof key === 'string' ? key : undefined;
}

/** `run_requested+` matches one or more; anything else exactly once, in order. */
function matchesStory(kinds: string[], story: string[]): boolean {
  let i = 0;
  for (const step of story) {
    const many = step.endsWith('+');
    const kind = many ? step.slice(0, -1) : step;
    if (kinds[i] !== kind) {
      // A manual run's own end is told in the thread too; allow it between the requests and the recovery.
      return false;
    }
    i++;
    if (many) while (kinds[i] === kind || (kind === 'run_requested' && kinds[i] === 'run_finished')) i++;
  }
  return i === kinds.length;
}

/**
 * Replies must come in event order after their root, per thread and alert (a
 * storm message's thread holds several alerts' pages; the storm message itself
 * tells no one event). A root's own reply (the page of the row that posted the
 * root) tells the root's event: it must come first, right after the root.
 */
function misorderedThreads(slack: RecordingSlackApi): number {
  let bad = 0;
  for (const root of slack.messages().filter((m) => !m.threadTs)) {
    const last = new Map<string, number>();
    for (const m of [root, ...slack.replies(root.channel, root.ts)]) {
      const key = keyOf(m) ?? '';
      const parsed = KEY.exec(rowKeyOf(key));
      if (!parsed) {
        if (m !== root) bad++; // a reply that tells no alert's event
        continue;
      }
      const order = Number(parsed[2]) + (rowKeyOf(key) === key ? 0 : 0.5);
      const before = last.get(parsed[1]!);
      if (before !== undefined && !(order > before)) bad++;
      last.set(parsed[1]!, order);
    }
  }
  return bad;
}

/** Each (workflow, tick, attempt) the launcher started, counted from the commands' own log. */
async function launchesTwice(launchLog: string): Promise<number> {
  const text = await readFile(launchLog, 'utf8').catch(() => '');
  const seen = new Map<string, number>();
  for (const line of text.split('\n').filter(Boolean)) seen.set(line, (seen.get(line) ?? 0) + 1);
  return [...seen.values()].filter((n) => n > 1).length;
}

async function originalsTwice(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from (
      select workflow_id, tick from runs where original_run_id is null and tick is not null
      group by workflow_id, tick having count(*) > 1
    ) x
  `.execute(db);
  return rows[0]?.n ?? 0;
}
