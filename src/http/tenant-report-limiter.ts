import { reportLimitMessage } from '../domain/tenant-limits.js';
import { peek, refill, take, type Bucket, type BucketPolicy } from '../domain/token-bucket.js';

export type ReportAdmission = { ok: true } | { ok: false; limit: number; retryAfterSeconds: number; message: string };

/**
 * Each tenant's runs reported (`POST /api/v1/runs`, `POST /api/v1/runs/{id}`
 * with its token, and pings of its workflows' keys) take a token of its own
 * bucket, `TENANT_REPORTS_PER_MINUTE` a minute: a tenant reporting as fast
 * as it can spends its own allowance, not the API pool and the evaluations
 * every tenant's reports share. In this replica's memory, one bucket per
 * tenant (the tenants are few): N replicas allow N times the rate. The admin
 * token is not counted.
 */
export class TenantReportLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly policy: BucketPolicy;

  constructor(private readonly perMinute: number) {
    this.policy = { capacity: perMinute, periodMs: 60_000 };
  }

  admit(tenant: string, now: number): ReportAdmission {
    const bucket = refill(this.buckets.get(tenant), now, this.policy);
    const verdict = peek(bucket, this.policy);
    this.buckets.set(tenant, verdict.ok ? take(bucket) : bucket);
    if (verdict.ok) return { ok: true };
    return { ok: false, limit: this.perMinute, retryAfterSeconds: verdict.retryAfterSeconds, message: reportLimitMessage(tenant, this.perMinute, verdict.retryAfterSeconds) };
  }
}
