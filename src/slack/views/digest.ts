import type { Deps } from '../../deps.js';
import type { DigestSchedule } from '../../db/schema.js';
import { latestFireAtOrBefore } from '../../domain/schedule.js';
import type { HousekeepingJob } from '../../engine/housekeeping.js';
import { loadDigestFacts } from '../../services/digest-queries.js';
import { buildDigest, type Digest } from '../blocks/digest.js';
import { alertMetadata } from '../transport/metadata.js';
import type { SlackOutboxApi } from '../transport/slack-api.js';

/** A digest fire time later than this is let go: a replica down over 9:00 does not post it at noon. */
const CATCH_UP_MS = 15 * 60_000;
/** The period a digest on demand covers, or a scheduled one whose cron has no earlier fire time. */
export const ON_DEMAND_PERIOD_MS = 86_400_000;

/** Sends a digest somewhere besides the tenant channel (email); throws on failure. */
export type DigestMailer = (tenantId: string, digest: Digest) => Promise<number>;

/** The tenant's digest for the day up to `now` (`/scheduler digest`); undefined when there is nothing to say. */
export async function digestOnDemand(deps: Pick<Deps, 'db'>, tenantId: string, now: Date): Promise<Digest | undefined> {
  const facts = await loadDigestFacts(deps.db, tenantId, new Date(now.getTime() - ON_DEMAND_PERIOD_MS), now);
  return facts && buildDigest(facts);
}

/** The period a scheduled digest covers: from the fire time before `fireAt` (or a day) up to it. */
export function digestPeriod(schedule: DigestSchedule, fireAt: Date): { since: Date; until: Date } {
  const previous = latestFireAtOrBefore(schedule.cron, schedule.timezone, new Date(fireAt.getTime() - 1));
  return { since: previous ?? new Date(fireAt.getTime() - ON_DEMAND_PERIOD_MS), until: fireAt };
}

type Outcome = 'sent' | 'quiet' | 'claimed_elsewhere' | 'failed' | 'not_due';

/**
 * The `digest` housekeeping job: each minute, every tenant whose digest cron
 * fired since (at most CATCH_UP_MS ago) gets it once. Each tenant's fire time
 * is claimed by a housekeeping_firings row (job `digest:<tenant>`, fire_at),
 * so replicas and retries never send it twice; a post Slack may retry later
 * gives the claim back for the next minute.
 */
export function digestJob(deps: Pick<Deps, 'db' | 'logger' | 'replicaId'>, api: SlackOutboxApi, mailer?: DigestMailer): HousekeepingJob {
  const log = deps.logger.child({ job: 'digest' });

  async function sendOne(tenant: { id: string; channel: string | null; digest: DigestSchedule }, now: Date): Promise<Outcome> {
    const fireAt = latestFireAtOrBefore(tenant.digest.cron, tenant.digest.timezone, now);
    if (!fireAt || now.getTime() - fireAt.getTime() > CATCH_UP_MS) return 'not_due';
    const job = `digest:${tenant.id}`;
    const claimed = await deps.db
      .insertInto('housekeepingFirings')
      .values({ job, fireAt, replica: deps.replicaId, startedAt: now })
      .onConflict((oc) => oc.columns(['job', 'fireAt']).doNothing())
      .returning('job')
      .executeTakeFirst();
    if (!claimed) return 'claimed_elsewhere';
    const { since, until } = digestPeriod(tenant.digest, fireAt);
    const facts = await loadDigestFacts(deps.db, tenant.id, since, until);
    const digest = facts && buildDigest(facts);
    const finish = (result: Record<string, unknown>) =>
      deps.db.updateTable('housekeepingFirings').set({ finishedAt: new Date(), result: JSON.stringify(result) }).where('job', '=', job).where('fireAt', '=', fireAt).execute();
    if (!digest) {
      await finish({ sent: false, quiet: true });
      return 'quiet';
    }
    const result: Record<string, unknown> = { sent: true };
    if (tenant.channel) {
      const posted = await api.postMessage({
        channel: tenant.channel,
        text: digest.text,
        blocks: digest.blocks,
        metadata: alertMetadata({ alertId: 0, tenant: tenant.id, workflow: '', event: 'digest', severity: 'warning', key: `${job}:${fireAt.toISOString()}` }),
      });
      if (!posted.ok) {
        log.warn({ tenant: tenant.id, fireAt, error: posted.error, kind: posted.kind }, 'digest not posted');
        if (posted.kind === 'rate_limited' || posted.kind === 'transient') {
          await deps.db.deleteFrom('housekeepingFirings').where('job', '=', job).where('fireAt', '=', fireAt).execute();
          return 'failed';
        }
        result.slackError = posted.error;
      } else result.ts = posted.ts;
    }
    if (mailer) result.emailed = await mailer(tenant.id, digest).catch((error: unknown) => (log.warn({ tenant: tenant.id, err: error }, 'digest not mailed'), 0));
    await finish(result);
    return 'sent';
  }

  return {
    name: 'digest',
    cron: '* * * * *',
    timezone: 'UTC',
    async run(now) {
      const tenants = await deps.db.selectFrom('tenants').select(['id', 'channel', 'digest']).where('enabled', '=', true).where('digest', 'is not', null).orderBy('id').execute();
      // This job's own per-minute claims are kept a day (the per-tenant ones stay: they are the digests' record).
      await deps.db.deleteFrom('housekeepingFirings').where('job', '=', 'digest').where('fireAt', '<', new Date(now.getTime() - ON_DEMAND_PERIOD_MS)).execute();
      const counts: Record<string, number> = {};
      for (const t of tenants) {
        const outcome = await sendOne({ id: t.id, channel: t.channel, digest: t.digest! }, now).catch((error: unknown) => {
          log.error({ tenant: t.id, err: error }, 'digest failed');
          return 'failed' as const;
        });
        if (outcome !== 'not_due') counts[outcome] = (counts[outcome] ?? 0) + 1;
      }
      return counts;
    },
  };
}
