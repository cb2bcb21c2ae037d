import type { CompleteBy } from './run-duration.js';
import { nextFireAfter } from './schedule.js';
import type { OverlapPolicy } from './overlap.js';
import { defaultCatchUpSeconds } from './catch-up.js';
import { zoneOf } from './zone.js';

/**
 * Cadence decides patience (DESIGN.md, core idea 2). The typical gap between
 * fire times, not the shortest or the longest, picks the defaults, so
 * `0 9 * * 1-5` reads as daily and a DST night's 23 h or 25 h gap does not
 * move anything.
 */

/** The largest `alertAfter` a policy may set (src/config/workflows-file.ts); retention keeps streaks with it in mind (src/domain/retention.ts). */
export const MAX_ALERT_AFTER = 100;

export type Severity = 'warning' | 'critical';

export interface Policy {
  /** Extra attempts per tick after the first one fails. */
  retries: number;
  /** Consecutive confirmed failures before an alert opens. */
  alertAfter: number;
  firstSeverity: Severity;
  /** An unowned warning becomes critical at opened_at + multiplier × cadence. */
  escalationMultiplier: number;
  /** Consecutive successes before an open alert resolves. */
  recoverAfter: number;
  /** How long after its tick a run may start before the tick counts as missed. */
  graceSeconds: number;
  /** A run still running this long after it started is failed as timed out. */
  timeoutSeconds: number;
  /** A success with fewer rows than this counts as a failure ("empty output"); null: no check. */
  minRows: number | null;
  /** A success faster than this counts as a failure ("too fast"); null: no check. */
  minDurationSeconds: number | null;
  /** A fixed "running long" threshold; null: learned from the workflow's own successes (run-duration.ts). */
  runningLongAfterSeconds: number | null;
  /** The tick's run must have succeeded by this local time; null: no deadline. */
  completeBy: CompleteBy | null;
  /** A managed tick falling due while a run of the workflow still runs: fired beside it, or skipped (overlap.ts). */
  overlap: OverlapPolicy;
  /** How late a managed tick may still start; older ones are missed (catch-up.ts). */
  catchUpSeconds: number;
}

/**
 * Per-workflow overrides, every field optional (the shape of workflows.policy),
 * and the owner's reminders, which the cadence's defaults leave to escalation.ts.
 */
export type PolicyOverrides = Partial<Policy> & { remindAfterSeconds?: number; ownershipLapsesAfterReminders?: number };

export interface CadenceProfile extends Policy {
  /** Median gap between upcoming fire times. */
  cadenceSeconds: number;
  /**
   * "Kept failing since it opened": an unowned warning also escalates once the
   * workflow has failed this many consecutive ticks (alertAfter more than it
   * took to open). Derived, not overridable.
   */
  escalateAfterFailures: number;
  /** What the cadence alone gives, before overrides (the API shows both). */
  derived: Policy;
  /** The workflow's own overrides, as stored. */
  overrides: PolicyOverrides;
}

const MINUTES_10 = 600;
const HOUR = 3600;
const DAY = 86_400;

/** Fire times sampled for the median; enough to see a whole week of a weekday cron. */
const SAMPLE = 64;
/**
 * How far past the first fire time the sample reaches, at most: eight years,
 * two leap cycles (a yearly job reads 365 days whatever the year). A rare
 * cron's 64 fire times were centuries of cron arithmetic (`0 0 * 2 1#5`, a
 * fifth Monday in February, fires every 28 to 40 years: 1,800 years, a second
 * of CPU per profile, on any workflow a tenant may create); every gap past a
 * day gives the same policy (the 24 h anchor), so the sample stops here. The
 * second fire time is always in it: one gap is the least a cadence needs.
 */
const SAMPLE_HORIZON_MS = 8 * 365.25 * 86_400_000;

/**
 * The answer depends only on the first fire time after `at` (the sample is
 * the run of fire times from there), so it is memoised on that, exactly; and
 * the run itself is kept per expression, so the next tick's sample costs one
 * more fire time instead of 65. The profile is read for every claimed tick
 * and every routed batch, and the sample was most of the engine's CPU (the
 * replay measured it).
 */
const gapMemo = new Map<string, number>();
const runs = new Map<string, number[]>();
const MEMO_MAX = 10_000;

/** The median gap, in seconds on the zone's wall clock, between the fire times following `at`. */
export function typicalGapSeconds(cron: string, tz: string, at: Date): number {
  const first = nextFireAfter(cron, tz, at).getTime();
  const key = `${tz} ${first} ${cron}`;
  const known = gapMemo.get(key);
  if (known !== undefined) return known;
  // Gaps on the zone's wall clock: a DST night (23 h, 25 h) is not a gap of its own, so the median of a
  // schedule whose gaps alternate (`0 9,17 * * *`: 8 h, 16 h) or of months (31 d, 31 d ± 1 h) is the same
  // whatever the sample's start, and the effective policy, with its version, does not change with the date.
  const zone = zoneOf(tz);
  const gap = medianGap(sampleFrom(cron, tz, first).map((t) => new Date(zone.wallOf(t))));
  remember(gapMemo, key, gap);
  return gap;
}

/**
 * The fire times the typical gap is read from: from the first after `at`, up
 * to SAMPLE + 1 of them within SAMPLE_HORIZON_MS of it, and the second always.
 */
export function cadenceSample(cron: string, tz: string, at: Date): Date[] {
  return sampleFrom(cron, tz, nextFireAfter(cron, tz, at).getTime()).map((t) => new Date(t));
}

function sampleFrom(cron: string, tz: string, first: number): number[] {
  return fireRunFrom(cron, tz, first).filter((t, i) => i < 2 || t - first <= SAMPLE_HORIZON_MS);
}

/** Consecutive fire times from `first` (itself a fire time) until SAMPLE + 1 or one past the horizon, reusing the run kept from an earlier call. */
function fireRunFrom(cron: string, tz: string, first: number): number[] {
  const key = `${tz} ${cron}`;
  const kept = runs.get(key);
  const from = kept ? kept.indexOf(first) : -1;
  const run = from >= 0 ? kept!.slice(from) : [first];
  while (run.length < SAMPLE + 1 && run[run.length - 1]! - first <= SAMPLE_HORIZON_MS) run.push(nextFireAfter(cron, tz, new Date(run[run.length - 1]!)).getTime());
  remember(runs, key, run);
  return run.slice(0, SAMPLE + 1);
}

function remember<V>(memo: Map<string, V>, key: string, value: V): void {
  if (!memo.has(key) && memo.size >= MEMO_MAX) memo.delete(memo.keys().next().value!);
  memo.set(key, value);
}

function medianGap(times: Date[]): number {
  const gaps = times.slice(1).map((t, i) => (t.getTime() - times[i]!.getTime()) / 1000);
  gaps.sort((a, b) => a - b);
  const mid = Math.floor(gaps.length / 2);
  const median = gaps.length % 2 ? gaps[mid]! : (gaps[mid - 1]! + gaps[mid]!) / 2;
  return Math.max(1, Math.round(median));
}

/**
 * Interpolates on log(gap) between the anchors (10 min, 1 h, 24 h), which hold
 * exactly; outside them the nearest anchor applies. Every value moves one way
 * only as the gap grows: rarer means more retries, fewer failures before
 * alerting, sooner escalation.
 */
function along(gap: number, at10m: number, at1h: number, at24h: number): number {
  if (gap <= MINUTES_10) return at10m;
  if (gap >= DAY) return at24h;
  if (gap <= HOUR) {
    const t = (Math.log(gap) - Math.log(MINUTES_10)) / (Math.log(HOUR) - Math.log(MINUTES_10));
    return at10m + t * (at1h - at10m);
  }
  const t = (Math.log(gap) - Math.log(HOUR)) / (Math.log(DAY) - Math.log(HOUR));
  return at1h + t * (at24h - at1h);
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** The defaults a cadence alone gives. */
export function derivePolicy(cadenceSeconds: number): Policy {
  const gap = cadenceSeconds;
  return {
    retries: Math.round(along(gap, 0, 2, 3)),
    alertAfter: Math.round(along(gap, 3, 2, 1)),
    // Critical from the first alert once a tick is at least half a day apart: by the next one the day is lost.
    firstSeverity: gap >= 12 * HOUR ? 'critical' : 'warning',
    escalationMultiplier: Math.round(along(gap, 6, 3, 1) * 10) / 10,
    recoverAfter: 1,
    // A tenth of the cadence, at least a minute (clock skew, slow starts), at most half an hour.
    graceSeconds: Math.round(clamp(gap * 0.1, 60, 1800)),
    // Most of the cadence: a run still going when the next tick fires is overlapping itself. At most 6 h.
    timeoutSeconds: Math.round(clamp(gap * 0.9, 60, 6 * HOUR)),
    minRows: null,
    minDurationSeconds: null,
    runningLongAfterSeconds: null,
    completeBy: null,
    overlap: 'allow',
    // Half the cadence, a minute to 6 h: a late start never runs into the next tick (catch-up.ts).
    catchUpSeconds: defaultCatchUpSeconds(gap),
  };
}

/** Overrides win field by field; an absent override keeps the derived value. */
export function applyOverrides(derived: Policy, overrides: PolicyOverrides): Policy {
  const pick = <K extends keyof Policy>(k: K): Policy[K] => (overrides[k] ?? derived[k]) as Policy[K];
  return {
    retries: pick('retries'),
    alertAfter: pick('alertAfter'),
    firstSeverity: pick('firstSeverity'),
    escalationMultiplier: pick('escalationMultiplier'),
    recoverAfter: pick('recoverAfter'),
    graceSeconds: pick('graceSeconds'),
    timeoutSeconds: pick('timeoutSeconds'),
    minRows: pick('minRows'),
    minDurationSeconds: pick('minDurationSeconds'),
    runningLongAfterSeconds: pick('runningLongAfterSeconds'),
    completeBy: pick('completeBy'),
    overlap: pick('overlap'),
    catchUpSeconds: pick('catchUpSeconds'),
  };
}

/** The policy in force for a workflow at `at`: derived from its cadence, then its overrides. */
export function profileFor(cron: string, tz: string, overrides: PolicyOverrides | null | undefined, at: Date): CadenceProfile {
  return profileForCadence(typicalGapSeconds(cron, tz, at), overrides);
}

/** The policy a cadence gives with the workflow's overrides (an open alert's, from the cadence it captured). */
export function profileForCadence(cadenceSeconds: number, overrides: PolicyOverrides | null | undefined): CadenceProfile {
  const derived = derivePolicy(cadenceSeconds);
  const own = overrides ?? {};
  const effective = applyOverrides(derived, own);
  return { ...effective, cadenceSeconds, escalateAfterFailures: effective.alertAfter * 2, derived, overrides: own };
}
