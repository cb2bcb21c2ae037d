import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { countsTowardSharedCause, DEFAULT_SHARED_CAUSE_RULE, isSharedCause, SHARED_CAUSE_MEMBER_SQL, sharedCauseWindow, stormEnds, type SharedCauseRule } from '../domain/storm.js';
import { recordAlertEvents, type EventInput } from '../ledger/alert-events.js';
import { stormRuleOf } from '../ledger/storm-claims.js';
import { stormMembers } from '../ledger/storm-members.js';

type StormDeps = Pick<Deps, 'db' | 'clock' | 'config'>;

/**
 * Storms' ends and shared causes, run with the escalation clock (every
 * minute). Each is decided once across replicas: a storm is ended by a
 * compare-and-set on its locked row, a shared cause by inserting its
 * (error group, window start) key.
 */
export async function runStormClock(deps: StormDeps, now: Date): Promise<boolean> {
  const ended = await endSettledStorms(deps, now);
  const called = await callOutSharedCauses(deps, now);
  return ended + called > 0;
}

/**
 * Ends the storms that stopped growing and have fewer alerts open than make a
 * storm (src/domain/storm.ts stormEnds). Each alert still open, and without a
 * thread of its own in that channel, is told it outlived the storm: that
 * event, routed to the storm's channel only, posts its own root there.
 */
export async function endSettledStorms(deps: StormDeps, now: Date): Promise<number> {
  const rule = stormRuleOf(deps.config);
  const candidates = await deps.db
    .selectFrom('storms')
    .select('id')
    .where('endedAt', 'is', null)
    .where('lastJoinedAt', '<', new Date(now.getTime() - rule.windowSeconds * 1000))
    .execute();
  let ended = 0;
  for (const { id } of candidates) {
    const done = await deps.db.transaction().execute(async (trx) => {
      const storm = await trx.selectFrom('storms').selectAll().where('id', '=', id).where('endedAt', 'is', null).forUpdate().skipLocked().executeTakeFirst();
      if (!storm) return false;
      const open = await stormMembers(trx, id).selectAll('a').select(['t.channel as tenantChannel', 'th.rootTs']).where('a.status', '=', 'open').execute();
      if (!stormEnds({ lastJoinedAt: storm.lastJoinedAt, openMembers: open.length, now, rule })) return false;
      await trx.updateTable('storms').set({ endedAt: now }).where('id', '=', id).execute();
      const members = await trx.selectFrom('stormAlerts').select((eb) => eb.fn.countAll<number>().as('n')).where('stormId', '=', id).executeTakeFirstOrThrow();
      const events: EventInput[] = open
        .filter((a) => a.rootTs === null)
        .map(({ tenantChannel, rootTs: _rootTs, ...alert }) => ({
          alert,
          tenant: { channel: tenantChannel },
          kind: 'storm_outlived' as const,
          data: { stormId: Number(id), startedAt: storm.startedAt.toISOString(), alerts: Number(members.n) },
          now,
          config: deps.config,
          onlyDestinations: [storm.destination],
        }));
      await recordAlertEvents(trx, events);
      return true;
    });
    if (done) ended++;
  }
  return ended;
}

/** An alert that may count toward and carry a callout (src/domain/storm.ts countsTowardSharedCause): not one in shadow. */
const sharedCauseMember = sql.raw(SHARED_CAUSE_MEMBER_SQL);

export function sharedCauseRuleOf(config: Partial<Pick<Deps['config'], 'SHARED_CAUSE_MIN_WORKFLOWS' | 'SHARED_CAUSE_WINDOW_SECONDS'>>): SharedCauseRule {
  return {
    minWorkflows: config.SHARED_CAUSE_MIN_WORKFLOWS ?? DEFAULT_SHARED_CAUSE_RULE.minWorkflows,
    windowSeconds: config.SHARED_CAUSE_WINDOW_SECONDS ?? DEFAULT_SHARED_CAUSE_RULE.windowSeconds,
  };
}

/**
 * Calls out, on the platform channel only, each error group that open alerts
 * of enough distinct workflows (of any tenants) failed with inside the
 * window: once per group per window, claimed by inserting the (group, window
 * start) key (seed 002), and not again within a window of the last callout.
 * An alert in shadow neither counts nor carries it (countsTowardSharedCause
 * in src/domain/storm.ts). The event hangs on the group's newest live alert and is
 * routed to the platform channel alone; its kind is left out of every
 * tenant-facing read (it names other tenants' workflows).
 */
export async function callOutSharedCauses(deps: StormDeps, now: Date): Promise<number> {
  const rule = sharedCauseRuleOf(deps.config);
  const platform = deps.config.PLATFORM_CHANNEL;
  if (rule.minWorkflows <= 0) return 0;
  const window = sharedCauseWindow(now, rule);
  const groups = await sql<{ errorGroup: string; workflows: number; tenants: number }>`
    select a.error_group, count(distinct a.workflow_id)::int as workflows, count(distinct w.tenant_id)::int as tenants
    from alerts a join workflows w on w.id = a.workflow_id join tenants t on t.id = w.tenant_id
    where a.status = 'open' and a.error_group is not null and a.updated_at > ${window.since} and ${sharedCauseMember}
    group by a.error_group
    having count(distinct a.workflow_id) >= ${rule.minWorkflows}`.execute(deps.db);
  let called = 0;
  for (const g of groups.rows) {
    if (!isSharedCause(g.workflows, rule)) continue;
    const won = await deps.db.transaction().execute(async (trx) => {
      const members = await trx
        .selectFrom('alerts as a')
        .innerJoin('workflows as w', 'w.id', 'a.workflowId')
        .innerJoin('tenants as t', 't.id', 'w.tenantId')
        .selectAll('a')
        .select(['w.name as workflowName', 't.id as tenantId', 't.channel as tenantChannel', 'w.shadow as workflowShadow', 't.shadow as tenantShadow'])
        .where('a.status', '=', 'open')
        .where('a.errorGroup', '=', g.errorGroup)
        .where('a.updatedAt', '>', window.since)
        .orderBy('a.id')
        .execute()
        .then((rows) => rows.filter(countsTowardSharedCause));
      const newest = members.at(-1);
      if (!newest) return false;
      // A group still failing as the window rolls over is not called out again until a whole window after the last callout.
      const recent = await trx.selectFrom('sharedCauses').select('calledAt').where('errorGroup', '=', g.errorGroup).where('calledAt', '>', window.since).executeTakeFirst();
      if (recent) return false;
      const claimed = await trx
        .insertInto('sharedCauses')
        .values({ errorGroup: g.errorGroup, windowStart: window.start, calledAt: now, alertId: newest.id, workflows: g.workflows, tenants: g.tenants })
        .onConflict((oc) => oc.columns(['errorGroup', 'windowStart']).doNothing())
        .returning('errorGroup')
        .executeTakeFirst();
      if (!claimed) return false;
      if (!platform) return true; // claimed and recorded; no platform channel to tell
      const { workflowName: _w, tenantId: _t, tenantChannel, workflowShadow: _ws, tenantShadow: _ts, ...alert } = newest;
      await recordAlertEvents(trx, [
        {
          alert,
          tenant: { channel: tenantChannel },
          kind: 'shared_cause',
          data: { errorGroup: g.errorGroup, error: newest.lastError, count: g.workflows, tenants: g.tenants, workflows: members.map((m) => ({ tenant: m.tenantId, workflow: m.workflowName, alertId: m.id })) },
          now,
          config: deps.config,
          onlyDestinations: [`slack:${platform}`],
        },
      ]);
      return true;
    });
    if (won) called++;
  }
  return called;
}

/**
 * The earliest instant from `now` at which `runStormClock` may have work (for
 * a driver that jumps from instant to instant, the replay's): an active storm
 * with fewer alerts open than make one ends once it has not grown for the
 * window; an error group that is a shared cause now is called out at once,
 * or a window after its last callout. Undefined when neither can come
 * without something else happening first (an alert resolving, a failure).
 */
export async function stormClockDueAt(deps: StormDeps, now: Date): Promise<Date | undefined> {
  const storm = stormRuleOf(deps.config);
  const shared = sharedCauseRuleOf(deps.config);
  const window = sharedCauseWindow(now, shared);
  const { rows } = await sql<{ stormEnd: Date | null; calloutDue: Date | null }>`
    select
      (select min(s.last_joined_at) from storms s where s.ended_at is null
        and (select count(*) from storm_alerts sa join alerts a on a.id = sa.alert_id where sa.storm_id = s.id and a.status = 'open') < ${Math.max(storm.minAlerts, 1)}) as storm_end,
      (select min(coalesce((select max(sc.called_at) from shared_causes sc where sc.error_group = g.error_group and sc.called_at > ${window.since}) + ${`${shared.windowSeconds} seconds`}::interval, ${now}))
        from (select a.error_group from alerts a join workflows w on w.id = a.workflow_id join tenants t on t.id = w.tenant_id
          where a.status = 'open' and a.error_group is not null and a.updated_at > ${window.since} and ${sharedCauseMember}
          group by a.error_group having ${shared.minWorkflows} > 0 and count(distinct a.workflow_id) >= ${shared.minWorkflows}) g) as callout_due
  `.execute(deps.db);
  const r = rows[0]!;
  // A storm ends when it has not grown for more than the window; a callout is due a whole window after the last.
  const due = [r.stormEnd && r.stormEnd.getTime() + storm.windowSeconds * 1000 + 1, r.calloutDue && Math.max(now.getTime(), r.calloutDue.getTime() + 1)].filter((d): d is number => typeof d === 'number');
  return due.length ? new Date(Math.max(now.getTime(), Math.min(...due))) : undefined;
}
