import type { ColumnType, Generated } from 'kysely';
import type { Defaulted, DefaultedJson, DefaultedTimestamp, Json, Timestamp } from './columns.js';

/** Alerts, their events, the outbox of notifications, and what delivering them keeps. */

export type AlertStatus = 'open' | 'resolved';
export type Severity = 'warning' | 'critical';
export type OwnerTeam = 'engineering' | 'customer';
export type NotificationStatus = 'pending' | 'held' | 'sending' | 'sent' | 'dead' | 'skipped';

export interface AlertsTable {
  id: Generated<number>;
  workflowId: number;
  generation: number;
  status: AlertStatus;
  severity: Severity;
  openedAt: Timestamp;
  escalatedAt: Timestamp | null;
  escalateAt: Timestamp | null;
  resolvedAt: Timestamp | null;
  cadenceSeconds: number;
  policy: Json<Record<string, unknown>>;
  consecutiveFailures: number;
  lastError: string | null;
  errorGroup: string | null;
  errorGroupFirstAt: Timestamp | null;
  errorGroupLastAt: Timestamp | null;
  errorGroupCount: Defaulted<number>;
  stage: string | null;
  firstRunId: number | null;
  lastRunId: number | null;
  ownerTeam: Defaulted<OwnerTeam>;
  ownerUser: string | null;
  ownerNote: string | null;
  acknowledgedBy: string | null;
  acknowledgedAt: Timestamp | null;
  silencedUntil: Timestamp | null;
  silencedBy: string | null;
  silenceReason: string | null;
  healthyStreak: Defaulted<number>;
  resolvedByRunId: number | null;
  updatedAt: Timestamp;
  /** The PagerDuty destination ids configured when it opened or went live (migration 0030; null before): see `opensIncident`. */
  pagersAtOpening: string[] | null;
  /** First seen flapping while open (migration 0003); the `flapping` note is posted once. */
  flappingSince: Timestamp | null;
  /** The workflow's policy version the alert runs under (opened under, or told of since; migration 0010). */
  policyVersion: Defaulted<number | null>;
  /** When the last reminder was told (migration 0005); the claim of the next one. */
  remindedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** What opened it when no failure did: 'running_long' | 'completion_missed' (migration 0014); null: failures. */
  cause: Defaulted<string | null>;
  /** The upstream incident this alert is linked to (migration 0012): it outlived it, or was open when it broke. */
  upstreamAlertId: ColumnType<number | null, number | null | undefined, number | null>;
  /**
   * An alert opened by a cause (running long, completion deadline): the newest confirmed failure history already
   * held when it opened, known and not counted, so never told as news (migration 0022); null otherwise.
   */
  knownFailureRunId: ColumnType<number | null, number | null | undefined, number | null>;
  /** Likewise, the newest success history held when it opened: it resolves nothing (migration 0022); null otherwise. */
  knownSuccessRunId: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface AlertEventsTable {
  id: Generated<number>;
  alertId: number;
  at: Timestamp;
  kind: string;
  actor: string | null;
  data: DefaultedJson<Record<string, unknown>>;
  /** The policy version the event was decided under (migration 0010). */
  policyVersion: Defaulted<number | null>;
}

export interface NotificationsTable {
  id: Generated<number>;
  alertId: number;
  eventId: number;
  destination: string;
  idempotencyKey: string;
  status: Defaulted<NotificationStatus>;
  attempts: Defaulted<number>;
  nextAttemptAt: Timestamp;
  leaseOwner: string | null;
  leaseExpiresAt: Timestamp | null;
  result: Json<Record<string, unknown>> | null;
  lastError: string | null;
  createdAt: Timestamp;
  sentAt: Timestamp | null;
}

export interface AlertThreadsTable {
  alertId: number;
  destination: string;
  channel: string;
  rootTs: string;
  renderedEventId: number | null;
  /** The key the root's metadata carries: the outbox row that posted it (null: not known, a thread older than migration 0018). */
  rootKey: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: DefaultedTimestamp;
}

export interface SlackHomeViewsTable {
  userId: string;
  openedAt: Timestamp;
}

/** A Slack request's signature, taken once across replicas: a replay within its five minutes finds it here. */
export interface SlackRequestsSeenTable {
  signature: string;
  /** Slack's X-Slack-Request-Timestamp, unix seconds. */
  slackTs: number;
}

/** When the next delivery under a pacing key may start, shared by every replica. */
export interface PaceSlotsTable {
  key: string;
  nextAt: Timestamp;
  updatedAt: Timestamp;
}

export interface DestinationOutagesTable {
  destination: string;
  failingSince: Timestamp;
  failures: number;
  heldUntil: Timestamp;
  lastError: string;
  noticedAt: Timestamp | null;
  /** Why it is held (migration 0026): unreachable, or its credentials refused. */
  cause: ColumnType<OutageCause, OutageCause | undefined, OutageCause>;
}

export type OutageCause = 'unreachable' | 'credentials';

/** A destination refusing notifications for good, while it keeps doing so (migration 0028). */
export interface DestinationRefusalsTable {
  destination: string;
  firstRefusedAt: Timestamp;
  refusals: number;
  lastError: string;
  noticedAt: Timestamp;
}

/** Keys the process needs that belong to the database, not the environment (migration 0019): `destination_id`. */
export interface InstanceKeysTable {
  name: string;
  value: string;
  createdAt: DefaultedTimestamp;
}
