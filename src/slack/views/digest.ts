import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DigestSchedule } from '../../db/schema.js';
import { DIGEST_STALE_MS, retryFailedFiring } from '../../domain/housekeeping-health.js';
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

/** Sends a digest somewhere besides the tenant channel (email): how many went, and the refusals (src/notify/digest-mail.ts). */
export type DigestMailer = (tenantId: string, digest: Digest) => Promise<{ emailed: number; failed: string[] }>;

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

/**
 * Claims a digest's fire time with one statement: a new one, or one whose
 * last attempt failed with nothing sent (its error recorded, not finished),
 * or stalled before posting for DIGEST_STALE_MS. The row's lock lets one
 * replica take a retry; the others find it taken (undefined). Says which
 * attempt this is; the claim is this replica's while the row keeps its
 * replica and started_at.
 */
async function claimFireTime(deps: Pick<Deps, 'db' | 'replicaId'>, job: string, fireAt: Date, now: Date): Promise<number | undefined> {
  const { rows } = await sql<{ attempts: number }>`
    insert into housekeeping_firings as f (job, fire_at, replica, started_at, result)
    values (${job}, ${fireAt}, ${deps.replicaId}, ${now}, ${JSON.stringify({ attempts: 1 })})
    on conflict (job, fire_at) do update
      set replica = excluded.replica, started_at = excluded.started_at, error = null,
        result = jsonb_build_object('attempts', coalesce((f.result->>'attempts')::int, 0) + 1)
      where f.finished_at is null and not coalesce((f.result->>'posting')::boolean, false)
        and (f.error is not null or f.started_at < ${new Date(now.getTime() - DIGEST_STALE_MS)})
    returning (f.result->>'attempts')::int as attempts`.execute(deps.db);
  return rows[0]?.attempts;
}

/**
 * An attempt that sent nothing failed: its error is recorded and the fire
 * time left to be claimed again the next minute, or given up (finished) after
 * DIGEST_ATTEMPTS (src/domain/housekeeping-health.ts). Says whether it will be tried again.
 */
async function failAttempt(deps: Pick<Deps, 'db' | 'replicaId'>, job: string, fireAt: Date, attempts: number, error: string, now: Date): Promise<boolean> {
  const retry = retryFailedFiring(attempts);
  await heldClaim(deps, job, fireAt, now)
    .set({ error, finishedAt: retry ? null : now, result: JSON.stringify(retry ? { attempts } : { attempts, gaveUp: true }) })
    .execute();
  return retry;
}

/** The firing row while this replica still holds its claim (taken at `claimedAt`): nobody has taken it over. */
function heldClaim(deps: Pick<Deps, 'db' | 'replicaId'>, job: string, fireAt: Date, claimedAt: Date) {
  return deps.db
    .updateTable('housekeepingFirings')
    .where('job', '=', job)
    .where('fireAt', '=', fireAt)
    .where('replica', '=', deps.replicaId)
    .where('startedAt', '=', claimedAt)
    .where('finishedAt', 'is', null);
}

/**
 * Marks the claim as posting, if this replica still holds it: from then on
 * the fire time is never taken over (a post's outcome may be unknown). False:
 * another replica took it over after a stall, and this one sends nothing.
 */
async function startPosting(deps: Pick<Deps, 'db' | 'replicaId'>, job: string, fireAt: Date, attempts: number, claimedAt: Date): Promise<boolean> {
  const marked = await heldClaim(deps, job, fireAt, claimedAt)
    .where('error', 'is', null)
    .set({ result: JSON.stringify({ attempts, posting: true }) })
    .executeTakeFirst();
  return Number(marked.numUpdatedRows) === 1;
}

type Outcome = 'sent' | 'quiet' | 'claimed_elsewhere' | 'failed' | 'not_due';

/**
 * The `digest` housekeeping job: each minute, every tenant whose digest cron
 * fired since (at most CATCH_UP_MS ago) gets it once. Each tenant's fire time
 * is claimed by a housekeeping_firings row (job `digest:<tenant>`, fire_at),
 * so replicas and retries never send it twice. An attempt that failed with
 * nothing sent (the facts could not be read; Slack answered with a transient
 * error or a rate limit) records its error and leaves the fire time to be
 * claimed again the next minute, up to DIGEST_ATTEMPTS attempts; a post whose
 * outcome is unknown (it threw) is never tried again.
 */
export function digestJob(deps: Pick<Deps, 'db' | 'logger' | 'replicaId'>, api: SlackOutboxApi, mailer?: DigestMailer): HousekeepingJob {
  const log = deps.logger.child({ job: 'digest' });

  async function sendOne(tenant: { id: string; channel: string | null; digest: DigestSchedule }, now: Date): Promise<Outcome> {
    const fireAt = latestFireAtOrBefore(tenant.digest.cron, tenant.digest.timezone, now);
    if (!fireAt || now.getTime() - fireAt.getTime() > CATCH_UP_MS) return 'not_due';
    const job = `digest:${tenant.id}`;
    const attempts = await claimFireTime(deps, job, fireAt, now);
    if (attempts === undefined) return 'claimed_elsewhere';
    const finish = (result: Record<string, unknown>) =>
      heldClaim(deps, job, fireAt, now).set({ finishedAt: now, result: JSON.stringify({ ...result, attempts }) }).execute();
    const failedAttempt = async (error: string): Promise<Outcome> => {
      const retry = await failAttempt(deps, job, fireAt, attempts, error, now);
      log[retry ? 'warn' : 'error']({ tenant: tenant.id, fireAt, attempts, error }, retry ? 'digest attempt failed; tried again next minute' : 'digest given up');
      return 'failed';
    };
    let digest: Digest | undefined;
    try {
      const { since, until } = digestPeriod(tenant.digest, fireAt);
      const facts = await loadDigestFacts(deps.db, tenant.id, since, until);
      digest = facts && buildDigest(facts);
    } catch (error) {
      return failedAttempt(error instanceof Error ? error.message : String(error));
    }
    if (!digest) {
      await finish({ sent: false, quiet: true });
      return 'quiet';
    }
    if (!(await startPosting(deps, job, fireAt, attempts, now))) return 'claimed_elsewhere';
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
        if (posted.kind === 'rate_limited' || posted.kind === 'transient') return failedAttempt(`slack: ${posted.error}`);
        result.slackError = posted.error;
      } else result.ts = posted.ts;
    }
    if (mailer) {
      const mailed = await mailer(tenant.id, digest).catch((error: unknown) => ({ emailed: 0, failed: [error instanceof Error ? error.message : String(error)] }));
      result.emailed = mailed.emailed;
      // Counted in the firing's record (shown in /readyz, so no addresses); the answers go to the log.
      if (mailed.failed.length) {
        result.emailFailed = mailed.failed.length;
        log.warn({ tenant: tenant.id, fireAt, errors: mailed.failed }, 'digest not mailed to every email destination');
      }
    }
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
