import type { ColumnType } from 'kysely';
import type { Defaulted, DefaultedJson, DefaultedTimestamp } from './columns.js';

/** Tenants: who a workflow belongs to, where its alerts go, who may act on them. */

export type DestinationConfig = Record<string, unknown> & { kind: string };

export interface TenantsTable {
  id: string;
  name: string;
  channel: string | null;
  apiTokenHash: string | null;
  destinations: DefaultedJson<DestinationConfig[]>;
  /** The only prefix a tenant's launcher `secretEnv` may name; null: none (from the workflows file). */
  secretEnvPrefix: Defaulted<string | null>;
  /** Hosts this tenant's http launchers may target, besides HTTP_LAUNCHER_ALLOWED_HOSTS. */
  launcherHosts: DefaultedJson<string[]>;
  source: Defaulted<'file' | 'api'>;
  enabled: Defaulted<boolean>;
  /** Recurring maintenance windows from the workflows file (migration 0006). */
  maintenance: DefaultedJson<RecurringMaintenance[]>;
  createdAt: DefaultedTimestamp;
  updatedAt: DefaultedTimestamp;
  /** Evaluated and recorded as usual, told only to the audit destination (migration 0010). */
  shadow: Defaulted<boolean>;
  /** Who may act on the tenant's alerts in Slack (migration 0005; src/domain/rights.ts). */
  rights: DefaultedJson<TenantRightsConfig>;
  /** Who an unowned escalation pages (migration 0005). */
  oncall: DefaultedJson<OnCallConfig>;
  /** An ownership older than this lapses back to unowned; null: never (migration 0005). */
  ownershipExpiresAfterSeconds: ColumnType<number | null, number | null | undefined, number | null>;
  /** When the tenant's digest is posted; null: only on demand (migration 0011). */
  digest: ColumnType<DigestSchedule | null, string | null | undefined, string | null>;
}

/** The tenant's digest schedule: node-cron syntax in an IANA zone. */
export interface DigestSchedule {
  cron: string;
  timezone: string;
}

/** A recurring maintenance window as stored: the file's `durationMinutes` / `duration` resolved to milliseconds. */
export interface RecurringMaintenance {
  cron: string;
  timezone: string;
  durationMs: number;
  reason?: string;
}

/** Slack user ids (U…/W…) and user-group ids (S…). */
export interface TenantRightsConfig {
  responders?: string[];
  admins?: string[];
}

export interface OnCallConfig {
  group?: string;
  users?: string[];
}
