import { type Kysely, sql } from 'kysely';
import { canonicalTimeZone } from '../src/domain/time-zone.js';

/**
 * Time zones were stored as typed: `europe/berlin` and `US/Pacific` were
 * accepted (Intl reads any case and every alias) and the crontab line the bot
 * hands out said `CRON_TZ=europe/berlin`, which cron looks up as a file on a
 * case-sensitive file system and, not finding it, runs the job in UTC. Input
 * is now stored by its canonical name (src/domain/time-zone.ts); this rewrites
 * what was stored before, wherever a zone is kept: a workflow's zone, its
 * `completeBy.timeZone` and recurring maintenance windows, a tenant's digest
 * and recurring maintenance windows, and the recurrence key of the
 * occurrences already recorded (cron|zone|duration), so a recorded occurrence
 * is still found as its rule's. A name already canonical, or one no longer
 * valid, is left as it is. History (policy_versions, alert snapshots) is not
 * rewritten.
 */

type Rule = { timezone?: unknown };

const canonical = (tz: unknown): unknown => (typeof tz === 'string' ? (canonicalTimeZone(tz) ?? tz) : tz);

function rules(value: unknown): { value: unknown; changed: boolean } {
  if (!Array.isArray(value)) return { value, changed: false };
  let changed = false;
  const next = value.map((rule: Rule) => {
    if (!rule || typeof rule !== 'object' || canonical(rule.timezone) === rule.timezone) return rule;
    changed = true;
    return { ...rule, timezone: canonical(rule.timezone) };
  });
  return { value: next, changed };
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const workflows = await sql<{ id: number; timezone: string; maintenance: unknown; policy: Record<string, unknown> | null }>`
    select id, timezone, maintenance, policy from workflows
  `.execute(db);
  for (const w of workflows.rows) {
    const timezone = canonical(w.timezone) as string;
    const maintenance = rules(w.maintenance);
    const completeBy = w.policy?.completeBy as { timeZone?: unknown } | undefined;
    const policyChanged = !!completeBy && typeof completeBy === 'object' && canonical(completeBy.timeZone) !== completeBy.timeZone;
    const policy = policyChanged ? { ...w.policy, completeBy: { ...completeBy, timeZone: canonical(completeBy!.timeZone) } } : w.policy;
    if (timezone === w.timezone && !maintenance.changed && !policyChanged) continue;
    await sql`
      update workflows set timezone = ${timezone}, maintenance = ${JSON.stringify(maintenance.value)}::jsonb, policy = ${JSON.stringify(policy)}::jsonb
      where id = ${w.id}
    `.execute(db);
  }

  const tenants = await sql<{ id: string; digest: { timezone?: unknown } | null; maintenance: unknown }>`select id, digest, maintenance from tenants`.execute(db);
  for (const t of tenants.rows) {
    const maintenance = rules(t.maintenance);
    const digestChanged = !!t.digest && canonical(t.digest.timezone) !== t.digest.timezone;
    if (!maintenance.changed && !digestChanged) continue;
    const digest = digestChanged ? { ...t.digest, timezone: canonical(t.digest!.timezone) } : t.digest;
    await sql`
      update tenants set digest = ${digest === null ? null : JSON.stringify(digest)}::jsonb, maintenance = ${JSON.stringify(maintenance.value)}::jsonb
      where id = ${t.id}
    `.execute(db);
  }

  // recurrenceKey (src/domain/maintenance.ts): `${cron}|${timezone}|${durationMs}`; a cron has no '|'.
  const keys = await sql<{ recurrence: string }>`select distinct recurrence from maintenance_windows where recurrence is not null`.execute(db);
  const renamed = keys.rows.flatMap(({ recurrence }) => {
    const parts = recurrence.split('|');
    if (parts.length < 3) return [];
    const tz = parts[parts.length - 2]!;
    const to = canonical(tz) as string;
    if (to === tz) return [];
    parts[parts.length - 2] = to;
    return [{ old: recurrence, new: parts.join('|') }];
  });
  if (renamed.length > 0) {
    const mapping = sql`jsonb_to_recordset(${JSON.stringify(renamed)}::jsonb) as m(old text, new text)`;
    // An occurrence already recorded under the new key (a rule spelt twice) keeps that row; the old one goes.
    await sql`
      update maintenance_windows w set recurrence = m.new from ${mapping}
      where w.recurrence = m.old
        and not exists (
          select 1 from maintenance_windows o
          where o.tenant_id = w.tenant_id and coalesce(o.workflow_id, 0) = coalesce(w.workflow_id, 0) and o.recurrence = m.new and o.starts_at = w.starts_at
        )
    `.execute(db);
    await sql`delete from maintenance_windows w using ${mapping} where w.recurrence = m.old`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
