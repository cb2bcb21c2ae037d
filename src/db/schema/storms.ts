import type { Generated, Selectable } from 'kysely';
import type { Timestamp } from './columns.js';

/** One storm per destination (a Slack channel) at a time (migration 0013; docs/alerts.md "Storms"). */
export interface StormsTable {
  id: Generated<number>;
  destination: string;
  channel: string;
  startedAt: Timestamp;
  /** The last opening the storm took in: it grows while openings keep coming within the window. */
  lastJoinedAt: Timestamp;
  endedAt: Timestamp | null;
  /** The storm message, once posted. */
  rootTs: string | null;
  /** Which replica posts the message: a compare-and-set lease, so two never both post it. */
  rootClaimedAt: Timestamp | null;
  /** The newest member event the message was rendered from (the refresher's compare-and-set, as for roots). */
  renderedEventId: number | null;
  renderedAt: Timestamp | null;
}

export interface StormAlertsTable {
  stormId: number;
  alertId: number;
  destination: string;
  joinedAt: Timestamp;
}

/** A shared-cause callout, claimed once per error group per window (seed 002: group + window start). */
export interface SharedCausesTable {
  errorGroup: string;
  windowStart: Timestamp;
  calledAt: Timestamp;
  alertId: number | null;
  workflows: number;
  tenants: number;
}

export type Storm = Selectable<StormsTable>;
