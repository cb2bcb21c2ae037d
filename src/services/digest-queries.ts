import { sql, type Transaction } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Database, Severity } from '../db/schema.js';
import { IN_SHADOW_SQL } from '../domain/shadow.js';
import { silencesOverlapping, type SilencePeriod } from '../domain/silence.js';

/** A workflow that is live (src/domain/shadow.ts), on `workflows w` joined with `tenants t`: the digest is the tenant's people's, and a shadow alert is told only to the audit destination. */
const live = sql.raw(`not ${IN_SHADOW_SQL}`);

/** What the digest of one tenant says about the period (since, until]: read in one snapshot, shaped by src/slack/blocks/digest.ts. */
export interface DigestFacts {
  tenant: { id: string; name: string };
  since: Date;
  until: Date;
  /** The zone its times are shown in: the tenant's digest schedule's (UTC without one); absent: UTC. */
  timeZone?: string;
  /** Alerts open at `until`, oldest first. */
  open: { workflow: string; severity: Severity; openedAt: Date; owner: string | null; silencedUntil: Date | null; silencedBy: string | null }[];
  /** Alerts seen flapping in the period (or still flapping). */
  flapped: { workflow: string; since: Date; open: boolean }[];
  /** Workflows with the most failed or missed runs in the period (maintenance ticks left out), most first. */
  noisiest: { workflow: string; failed: number }[];
  opened: number;
  /** Resolve times of the alerts resolved in the period, in milliseconds. */
  resolvedMs: number[];
  /** Silences that overlapped the period, ended or not (from the alert events; src/domain/silence.ts silencesOverlapping), oldest first. */
  silenced: ({ workflow: string } & SilencePeriod)[];
  maintenance: { workflow: string | null; startsAt: Date; endsAt: Date; reason: string | null }[];
  /** Runs told as running long, and completion deadlines missed, in the period (issue 16); optional for older callers. */
  slow?: { workflow: string; kind: 'running_long' | 'completion_missed'; at: Date }[];
  /** Workflows held back by an upstream incident in the period (docs/alerts.md): no alert of their own, told in the upstream's thread. */
  heldBack?: { workflow: string; upstream: string; failures: number; missed: number; stillBlocked: boolean }[];
  /** Storms in the tenant's channel that started in the period or are still under way (issue 16). */
  storms?: { startedAt: Date; endedAt: Date | null; alerts: number }[];
}

const NOISIEST = 5;

/**
 * One read-only transaction (repeatable read): every list agrees on one moment.
 * Workflows in shadow (their own flag or the tenant's) are left out of every
 * list: a shadow tenant's digest has nothing to say, and is not posted.
 */
export async function loadDigestFacts(db: Db, tenantId: string, since: Date, until: Date): Promise<DigestFacts | undefined> {
  return db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    const row = await trx.selectFrom('tenants').select(['id', 'name', 'digest']).where('id', '=', tenantId).executeTakeFirst();
    if (!row) return undefined;
    const tenant = { id: row.id, name: row.name };
    const alerts = () =>
      trx
        .selectFrom('alerts')
        .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
        .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
        .where('workflows.tenantId', '=', tenantId)
        .where('workflows.shadow', '=', false)
        .where('tenants.shadow', '=', false);
    const open = await alerts()
      .select(['workflows.name as workflow', 'alerts.severity', 'alerts.openedAt', 'alerts.ownerUser as owner', 'alerts.silencedUntil', 'alerts.silencedBy'])
      .where('alerts.status', '=', 'open')
      .orderBy('alerts.openedAt')
      .execute();
    const flapped = await alerts()
      .select(['workflows.name as workflow', 'alerts.flappingSince as since', 'alerts.status'])
      .where('alerts.flappingSince', 'is not', null)
      .where((eb) => eb.or([eb('alerts.status', '=', 'open'), eb.and([eb('alerts.flappingSince', '>', since), eb('alerts.flappingSince', '<=', until)])]))
      .orderBy('alerts.flappingSince')
      .execute();
    const opened = await alerts().select((eb) => eb.fn.countAll<string>().as('n')).where('alerts.openedAt', '>', since).where('alerts.openedAt', '<=', until).executeTakeFirstOrThrow();
    const resolved = await alerts()
      .select(['alerts.openedAt', 'alerts.resolvedAt'])
      .where('alerts.resolvedAt', '>', since)
      .where('alerts.resolvedAt', '<=', until)
      .execute();
    const silenced = await silencesIn(trx, tenantId, since, until);
    const maintenance = await trx
      .selectFrom('maintenanceWindows')
      .leftJoin('workflows', 'workflows.id', 'maintenanceWindows.workflowId')
      .innerJoin('tenants', 'tenants.id', 'maintenanceWindows.tenantId')
      .where('tenants.shadow', '=', false)
      .where((eb) => eb.or([eb('workflows.shadow', 'is', null), eb('workflows.shadow', '=', false)]))
      .select(['workflows.name as workflow', 'maintenanceWindows.startsAt', 'maintenanceWindows.endsAt', 'maintenanceWindows.reason'])
      .where('maintenanceWindows.tenantId', '=', tenantId)
      .where('maintenanceWindows.startsAt', '<', until)
      .where('maintenanceWindows.endsAt', '>', since)
      .orderBy('maintenanceWindows.startsAt')
      .execute();
    const { rows: noisiest } = await sql<{ workflow: string; failed: string }>`
      select w.name as workflow, count(*) as failed
      from runs r join workflows w on w.id = r.workflow_id join tenants t on t.id = w.tenant_id
      where w.tenant_id = ${tenantId} and ${live} and r.status in ('failed', 'missed') and not r.in_maintenance
        and coalesce(r.finished_at, r.created_at) > ${since} and coalesce(r.finished_at, r.created_at) <= ${until}
      group by w.name order by count(*) desc, w.name limit ${NOISIEST}
    `.execute(trx);
    const heldBack = await heldBackIn(trx, tenantId, since, until);
    const slow = await slowIn(trx, tenantId, since, until);
    const storms = await stormsIn(trx, tenantId, since, until);
    return {
      tenant,
      since,
      timeZone: row.digest?.timezone ?? 'UTC',
      storms,
      until,
      open,
      flapped: flapped.map((f) => ({ workflow: f.workflow, since: f.since!, open: f.status === 'open' })),
      noisiest: noisiest.map((n) => ({ workflow: n.workflow, failed: Number(n.failed) })),
      opened: Number(opened.n),
      resolvedMs: resolved.map((r) => r.resolvedAt!.getTime() - r.openedAt.getTime()),
      silenced,
      maintenance,
      slow,
      heldBack,
    };
  });
}

/** The silences of the tenant's alerts that overlapped the period, read from their silenced / unsilenced events. */
async function silencesIn(trx: Transaction<Database>, tenantId: string, since: Date, until: Date) {
  const { rows } = await sql<{ alertId: number; workflow: string; resolvedAt: Date | null; kind: string; at: Date; actor: string | null; data: unknown }>`
    select a.id as alert_id, w.name as workflow, a.resolved_at, e.kind, e.at, e.actor, e.data
    from alert_events e join alerts a on a.id = e.alert_id join workflows w on w.id = a.workflow_id join tenants t on t.id = w.tenant_id
    where w.tenant_id = ${tenantId} and ${live} and e.kind in ('silenced', 'unsilenced') and e.at <= ${until}
      and (a.status = 'open' or a.resolved_at > ${since})
    order by a.id, e.at, e.id
  `.execute(trx);
  const byAlert = new Map<number, typeof rows>();
  for (const r of rows) byAlert.set(r.alertId, [...(byAlert.get(r.alertId) ?? []), r]);
  return [...byAlert.values()]
    .flatMap((events) => silencesOverlapping(events, events[0]!.resolvedAt, since, until).map((p) => ({ workflow: events[0]!.workflow, ...p })))
    .sort((a, b) => a.from.getTime() - b.from.getTime());
}

async function heldBackIn(trx: Transaction<Database>, tenantId: string, since: Date, until: Date) {
  const { rows } = await sql<{ workflow: string; upstream: string; failures: number; missed: number; stillBlocked: boolean }>`
    select w.name as workflow,
      case when uw.tenant_id = w.tenant_id then uw.name else 'another tenant''s workflow' end as upstream,
      b.failures, b.missed, ua.status = 'open' as still_blocked
    from upstream_blocks b join workflows w on w.id = b.workflow_id join tenants t on t.id = w.tenant_id
    join alerts ua on ua.id = b.upstream_alert_id join workflows uw on uw.id = ua.workflow_id
    where w.tenant_id = ${tenantId} and ${live} and b.last_at > ${since} and b.since <= ${until}
    order by b.since, w.name
  `.execute(trx);
  return rows;
}

async function slowIn(trx: Transaction<Database>, tenantId: string, since: Date, until: Date) {
  const { rows } = await sql<{ workflow: string; kind: 'running_long' | 'completion_missed'; at: Date }>`
    select w.name as workflow, coalesce(e.data->'cause'->>'kind', e.kind) as kind, e.at
    from alert_events e join alerts a on a.id = e.alert_id join workflows w on w.id = a.workflow_id join tenants t on t.id = w.tenant_id
    where w.tenant_id = ${tenantId} and ${live} and e.at > ${since} and e.at <= ${until}
      and (e.kind in ('running_long', 'completion_missed') or (e.kind = 'opened' and e.data->'cause'->>'kind' in ('running_long', 'completion_missed')))
    order by e.at, e.id
  `.execute(trx);
  return rows;
}

async function stormsIn(trx: Transaction<Database>, tenantId: string, since: Date, until: Date) {
  const { rows } = await sql<{ startedAt: Date; endedAt: Date | null; alerts: number }>`
    select s.started_at, s.ended_at, (select count(*)::int from storm_alerts m where m.storm_id = s.id) as alerts
    from storms s join tenants t on s.destination = 'slack:' || t.channel
    where t.id = ${tenantId} and not t.shadow and s.started_at <= ${until} and (s.started_at > ${since} or s.ended_at is null or s.ended_at > ${since})
    order by s.started_at
  `.execute(trx);
  return rows;
}
