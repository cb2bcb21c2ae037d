import { sql, type Transaction } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Alert, Database, PolicyOverrides } from '../db/schema.js';
import { profileFor } from '../domain/cadence.js';
import { escalateAtAfterPolicyChange } from '../domain/evaluate.js';
import { changesForOpenAlert, effectivePolicy, keptByOpenAlert, policyChanges, policyForOpenAlert, type EffectivePolicy, type PolicyChange } from '../domain/policy-version.js';
import type { RoutingConfig } from '../ledger/destinations.js';
import { recordAlertEvents } from '../ledger/alert-events.js';

/**
 * Records a new policy version for every workflow whose effective policy is
 * not the one its current version says, in one transaction: the version row
 * (with who or what changed it), the workflow's pointer, and for an open
 * alert one `policy_changed` event in its thread (unless only what a tick
 * launches changed: catch-up, overlap); the alert continues under
 * the new rules from then on (its snapshot and, for an unescalated warning,
 * its escalation deadline with the cadence it captured when it opened).
 * A re-sync that changes nothing records nothing. Serialised across replicas
 * by an advisory lock, so two starting at once number versions once.
 */
export interface RecordPolicyVersions {
  now: Date;
  config: RoutingConfig;
  /**
   * Who or what changed them when the workflow's own overrides or schedule changed ("workflows file",
   * "api (acme)"); a change of the derived defaults alone is put down to this release of them.
   */
  changedBy: string;
  /** Only these workflows; every enabled one when absent. */
  workflowIds?: number[];
}

const CHUNK = 2_000;

/** The release whose cadence defaults a version was derived with. */
export const DEFAULTS_RELEASE = `defaults of scheduler-bot ${process.env.npm_package_version ?? '0.1.0'}`;

function causeOf(actor: string, stored: { overrides?: unknown } | null, overrides: object, changes: PolicyChange[]): string {
  if (!stored) return actor;
  const ownChange = JSON.stringify(stored.overrides ?? {}) !== JSON.stringify(overrides) || changes.some((c) => c.field === 'cadenceSeconds');
  return ownChange ? actor : DEFAULTS_RELEASE;
}

export async function recordPolicyVersions(db: Db, input: RecordPolicyVersions): Promise<number> {
  const ids = input.workflowIds ?? (await db.selectFrom('workflows').select('id').where('enabled', '=', true).orderBy('id').execute()).map((w) => w.id);
  let recorded = 0;
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    recorded += await db.transaction().execute((trx) => recordPolicyVersionsIn(trx, chunk, input));
  }
  return recorded;
}

/** The same inside a caller's transaction (a workflow written over the API, the file's sync). */
export async function recordPolicyVersionsIn(trx: Transaction<Database>, ids: number[], input: Omit<RecordPolicyVersions, 'workflowIds'>): Promise<number> {
  if (ids.length === 0) return 0;
  const { now } = input;
  {
    await sql`select pg_advisory_xact_lock(hashtext('scheduler-bot:policy-versions'))`.execute(trx);
    const rows = await trx
      .selectFrom('workflows as w')
      .innerJoin('tenants as t', 't.id', 'w.tenantId')
      .leftJoin('policyVersions as pv', (j) => j.onRef('pv.workflowId', '=', 'w.id').onRef('pv.version', '=', 'w.policyVersion'))
      .select(['w.id', 'w.cron', 'w.timezone', 'w.policy', 'w.policyVersion', 'w.source', 't.channel', 'pv.policy as stored'])
      .where('w.id', 'in', ids)
      .execute();
    const changed: Changed[] = [];
    const versions: { workflowId: number; version: number; policy: string; changedBy: string; changedAt: Date }[] = [];
    for (const row of rows) {
      const profile = profileFor(row.cron, row.timezone, row.policy ?? {}, now);
      const policy = effectivePolicy(profile);
      const changes = policyChanges((row.stored as Record<string, unknown> | null) ?? null, policy);
      if (changes.length === 0) continue;
      const version = (row.policyVersion ?? 0) + 1;
      const by = causeOf(input.changedBy, (row.stored as { overrides?: unknown } | null) ?? null, row.policy ?? {}, changes);
      versions.push({ workflowId: row.id, version, policy: JSON.stringify({ ...policy, overrides: row.policy ?? {} }), changedBy: by, changedAt: now });
      changed.push({ id: row.id, channel: row.channel, version, previous: row.policyVersion, policy, overrides: row.policy ?? {}, changes });
    }
    if (versions.length === 0) return 0;
    await trx.insertInto('policyVersions').values(versions).execute();
    await sql`
      update workflows w set policy_version = v.version
      from (select * from unnest(${changed.map((c) => c.id)}::int[], ${changed.map((c) => c.version)}::int[]) as v(id, version)) v
      where w.id = v.id
    `.execute(trx);
    await tellOpenAlerts(trx, changed, input);
    return versions.length;
  }
}

/**
 * A workflow's own overrides replaced, in one transaction with the version it
 * makes (and the `policy_changed` reply an open alert gets): what the replay
 * does where the ledger says a workflow's policy changed. Returns the version
 * now in force.
 */
export async function changeWorkflowPolicy(db: Db, workflowId: number, overrides: PolicyOverrides, input: Omit<RecordPolicyVersions, 'workflowIds'>): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    await trx.updateTable('workflows').set({ policy: JSON.stringify(overrides), updatedAt: input.now }).where('id', '=', workflowId).execute();
    await recordPolicyVersionsIn(trx, [workflowId], input);
    const row = await trx.selectFrom('workflows').select('policyVersion').where('id', '=', workflowId).executeTakeFirstOrThrow();
    return row.policyVersion;
  });
}

/** A workflow whose effective policy changed: its new version, and what it is made of. */
interface Changed {
  id: number;
  channel: string | null;
  version: number;
  previous: number | null;
  policy: EffectivePolicy;
  overrides: PolicyOverrides;
  changes: PolicyChange[];
}

/**
 * An open alert hears of a change once, and continues under the new rules
 * (its reminders too); of a change of what a tick launches alone it hears
 * nothing (`changesForOpenAlert`).
 */
async function tellOpenAlerts(trx: Transaction<Database>, changed: Changed[], input: RecordPolicyVersions): Promise<void> {
  const told = changed.filter((c) => c.previous !== null);
  if (told.length === 0) return;
  const open = await trx
    .selectFrom('alerts as a')
    .innerJoin('workflows as w', 'w.id', 'a.workflowId')
    .selectAll('a')
    .select(['w.cron as wfCron', 'w.timezone as wfTimezone'])
    .where('a.status', '=', 'open')
    .where(
      'a.workflowId',
      'in',
      told.map((c) => c.id),
    )
    .forUpdate()
    .execute();
  if (open.length === 0) return;
  const byWorkflow = new Map(told.map((c) => [c.id, c]));
  const updated: Alert[] = [];
  const kept = new Map<number, ReturnType<typeof keptByOpenAlert>>();
  for (const { wfCron, wfTimezone, ...alert } of open) {
    const change = byWorkflow.get(alert.workflowId)!;
    // The cadence, and what it decides of the escalation, stay the ones captured at opening (a new cron moves nothing).
    const forAlert = { ...policyForOpenAlert(change.policy, change.overrides, alert.cadenceSeconds), cadenceSeconds: alert.cadenceSeconds };
    // What a tick launches is the workflow's, not the alert's: kept out of its rules and its thread.
    const { cadenceSeconds: _kept, overlap: _overlap, catchUpSeconds: _catchUp, ...rules } = forAlert;
    kept.set(alert.id, keptByOpenAlert(changesForOpenAlert(change.changes), change.policy, forAlert));
    // The deadline moves by what a new multiplier changes, keeping the time a pause or a maintenance window
    // added to it.
    const oldMultiplier = (alert.policy as { escalationMultiplier?: unknown }).escalationMultiplier;
    const escalateAt =
      alert.severity === 'warning' && !alert.escalatedAt
        ? escalateAtAfterPolicyChange(alert.escalateAt, alert.openedAt, typeof oldMultiplier === 'number' ? oldMultiplier : undefined, rules.escalationMultiplier, alert.cadenceSeconds, {
            cron: wfCron,
            timezone: wfTimezone,
          })
        : alert.escalateAt;
    const next = await trx
      .updateTable('alerts')
      .set({
        policy: sql`policy || ${JSON.stringify(rules)}::jsonb`,
        policyVersion: change.version,
        escalateAt,
        updatedAt: input.now,
      })
      .where('id', '=', alert.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    updated.push(next);
  }
  // A version that changed only what a tick launches (catch-up, overlap) moves the alert's version silently:
  // nothing it does changes, so its thread is not told.
  const heard = updated.filter((alert) => changesForOpenAlert(byWorkflow.get(alert.workflowId)!.changes).length > 0);
  await recordAlertEvents(
    trx,
    heard.map((alert) => {
      const change = byWorkflow.get(alert.workflowId)!;
      return {
        alert,
        tenant: { channel: change.channel },
        kind: 'policy_changed' as const,
        data: { from: change.previous, to: change.version, changes: changesForOpenAlert(change.changes), kept: kept.get(alert.id) ?? [] },
        now: input.now,
        config: input.config,
      };
    }),
  );
}
