import type { ManualClock } from '../clock.js';
import type { Deps } from '../deps.js';
import { profileFor } from '../domain/cadence.js';
import { observedTickWindow, windowClosesAt } from '../domain/observed-dst.js';
import { runEscalationClock } from '../engine/escalation.js';
import { stormClockDueAt } from '../engine/storm-clock.js';
import { dueStorm } from '../slack/transport/storm-refresher.js';
import { checkFreshness } from '../engine/freshness.js';
import { checkRunDurations, nextDurationCheckAt } from '../engine/run-duration.js';
import { pollFinishedRuns } from '../engine/poller.js';
import type { UptimeHeartbeat } from '../engine/uptime.js';
import { renewRunLeases } from '../ledger/run-leases.js';
import { runInEngineOrder } from '../engine/steps.js';
import { fireDueTicks } from '../engine/tick-scheduler.js';
import type { OutboxSender } from '../notify/sender.js';
import { ROOT_UPDATE_INTERVAL_MS } from '../slack/transport/root-refresher.js';
import { lookAtLedger, nextEscalation, outboxStirred } from './ledger-look.js';
import type { OutsideScheduler } from './outside-scheduler.js';
import { ScriptedActions, type ActionRecord } from './scenario-actions.js';
import type { ScenarioLauncher } from './scenario-launcher.js';
import type { Scenario } from './scenario.js';

export interface DriverParts {
  deps: Deps;
  clock: ManualClock;
  scenario: Scenario;
  launcher: ScenarioLauncher;
  outside: OutsideScheduler;
  heartbeat: UptimeHeartbeat;
  sender: Pick<OutboxSender, 'tick' | 'pacer'>;
  refresher: { tick(): Promise<boolean> };
  /** Top-level notes with no outbox row (held back by another tenant's upstream: src/slack/transport/held-back-notes.ts); due when the instant's evaluation made them so. */
  notes?: { tick(): Promise<boolean> };
  workflowIdOf: (key: string) => number;
}

export interface DriveStats {
  /** Virtual instants the clock stopped at. */
  instants: number;
  actions: ActionRecord[];
  /** Wall time spent per phase (milliseconds), for finding where a slow replay goes. */
  phaseMs: Record<string, number>;
}

/** A loop tick that keeps finding work this many times in one instant is a bug, not a busy night. */
const MAX_ROUNDS = 10_000;
/** After `until`, the outbox still gets this much virtual time to deliver what was queued. */
const DRAIN_LIMIT_MS = 24 * 3_600_000;

/**
 * Runs the real loops' tick functions on a ManualClock: at each instant, in
 * a fixed order, until none of them finds work; then the clock jumps to the
 * next instant anything can happen at (a tick, a scripted run's end, a
 * deadline, an escalation check, an action, a silence's end, an outbox row
 * coming due, a pacing slot opening). Between instants nothing in the
 * engine can change, so skipping the time between is exact, not sampled.
 */
export class VirtualDriver {
  private readonly scripted: ScriptedActions;
  private instants = 0;
  private refresherReadyAt = 0;
  private readonly graceMs = new Map<number, number>();
  private readonly escalationMs: number;
  private readonly phaseMs: Record<string, number> = {};
  /** When the tick scheduler and the freshness detector next have work, and when a silence next ends, as of the last look. */
  private due = { tick: Infinity, freshness: Infinity, duration: Infinity, silenceEnd: NaN, escalation: Infinity, clockWork: false, stormClock: Infinity };
  /** Until when the outbox stays idle, if the last look left it so (see `outboxMayHaveWork`). */
  private outboxIdleUntil: number | undefined;

  constructor(private readonly p: DriverParts) {
    this.escalationMs = p.deps.config.ESCALATION_INTERVAL_SECONDS * 1000;
    this.scripted = new ScriptedActions(p.deps, p.launcher, p.scenario, p.workflowIdOf);
  }

  async run(): Promise<DriveStats> {
    const { clock, scenario } = this.p;
    const until = scenario.until.getTime();
    // A first look fills in what is due at the start itself.
    await this.nextInstant(false);
    for (let now: Date | undefined = clock.now(); now && now.getTime() <= until; now = await this.nextInstant(false)) {
      clock.set(now);
      await this.settle(now);
    }
    // What was queued before `until` is still delivered (paced, on the same clock).
    const drainEnd = until + DRAIN_LIMIT_MS;
    for (let now = await this.nextInstant(true); now; now = await this.nextInstant(true)) {
      if (now.getTime() > drainEnd) throw new Error(`the outbox was still sending at ${now.toISOString()}, a day after the scenario ended`);
      clock.set(now);
      await this.time('outbox', () => this.deliver());
    }
    return { instants: this.instants, actions: this.scripted.records, phaseMs: this.phaseMs };
  }

  /**
   * One instant: every loop in the engine's order (src/engine/steps.ts,
   * which follows the data: runs end → ticks fire → people act → overdue runs
   * fail → finished runs are routed and evaluated → warnings escalate → the
   * outbox delivers), so
   * one pass settles the instant unless a run launched in it also ends in it
   * (a zero-second duration), which takes another pass. The tick scheduler and
   * the freshness detector are called only when the last look at the
   * database says they have something due: nothing at this instant can make
   * more of their work due now (new ticks, deadlines and leases are all later).
   */
  private async settle(now: Date): Promise<void> {
    const { deps, launcher, outside, heartbeat } = this.p;
    this.instants++;
    await this.time('heartbeat', () => heartbeat.beat(now));
    // The escalation clock runs on its own grid (every ESCALATION_INTERVAL_SECONDS from the start), and when a silence ends.
    const onGrid = (now.getTime() - this.p.scenario.start.getTime()) % this.escalationMs === 0;
    for (let pass = 0; pass < MAX_ROUNDS; pass++) {
      // A run ends when its scripted time comes, when the freshness detector fails it, or at once when a launch
      // (a tick's, or an action's run now) is refused; the poller is called after any of those, as NOTIFY would wake it.
      let finished = false;
      let routed = false;
      let told = false;
      let acted = false; // a person's action or a policy change may make an escalation due at once
      const found = (did: boolean) => void (finished ||= did);
      await runInEngineOrder({
        'runs-end': async () => found((await this.time('runs-end', () => launcher.finishDue(now))) > 0),
        reports: () => this.time('outside-scheduler', () => outside.reportDue(now)),
        'tick-scheduler': async () => {
          if (pass === 0 && this.due.tick <= now.getTime()) found(await this.time('tick-scheduler', () => repeat(() => fireDueTicks(deps))));
        },
        actions: async () => {
          if (pass === 0) found((acted = await this.time('actions', () => this.scripted.performDue(now))));
        },
        // Renewed before the freshness check: a supervised run is never "lost" between instants.
        'lease-renewal': () => this.time('lease-renewal', () => renewRunLeases(deps, launcher.heldRunIds(), now)),
        freshness: async () => {
          if (pass === 0 && this.due.freshness <= now.getTime()) found(await this.time('freshness', () => checkFreshness(deps)));
        },
        'run-duration': async () => {
          if (pass === 0 && this.due.duration <= now.getTime()) told = await this.time('run-duration', () => checkRunDurations(deps));
        },
        poller: async () => {
          routed = finished && (await this.time('poller', () => repeat(() => pollFinishedRuns(deps))));
        },
        // The clock has work when the last look found some due (an escalation, a reminder, an ownership or a maintenance
        // window to watch, a storm), or when this instant changed alerts (a run routed, a long run told, a person acted).
        'escalation-clock': async () => {
          const stormWork = this.due.stormClock <= now.getTime(); // a storm's end or a shared cause, with or without an alert open
          if ((onGrid && (this.due.escalation <= now.getTime() || this.due.clockWork || routed || told || acted || stormWork)) || this.due.silenceEnd === now.getTime()) await this.time('escalation-clock', () => runEscalationClock(deps));
        },
        outbox: async () => {
          if (await this.time('outbox-look', () => this.outboxMayHaveWork(now))) await this.time('outbox', () => this.deliver());
        },
      });
      if ((launcher.nextEndAt()?.getTime() ?? Infinity) > now.getTime()) return;
    }
    throw new Error(`the engine did not settle at ${now.toISOString()}`);
  }

  private async time<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.phaseMs[phase] = (this.phaseMs[phase] ?? 0) + performance.now() - started;
    }
  }

  /**
   * Whether the outbox can find work now. It cannot when the last look left it
   * idle (no row due, no root or storm message stale, no destination held), no
   * row or lease has come due since by the clock, and nothing this instant
   * made a row due (an event's new rows, a silence's held rows let go) or
   * ended a storm. Skipping the sender's and the refresher's look then changes
   * nothing they would have done, and saves a third of an idle instant.
   */
  private async outboxMayHaveWork(now: Date): Promise<boolean> {
    const until = this.outboxIdleUntil;
    return until === undefined || now.getTime() >= until || outboxStirred(this.p.deps, now);
  }

  private async deliver(): Promise<boolean> {
    const sent = await repeat(() => this.p.sender.tick());
    const noted = this.p.notes ? await repeat(() => this.p.notes!.tick()) : false;
    let refreshed = false;
    while (await this.p.refresher.tick()) {
      refreshed = true;
      this.refresherReadyAt = this.p.clock.now().getTime() + ROOT_UPDATE_INTERVAL_MS;
    }
    return sent || noted || refreshed;
  }

  /** The earliest instant after now at which anything can happen; `outboxOnly` after the scenario's end. */
  private async nextInstant(outboxOnly: boolean): Promise<Date | undefined> {
    const { deps, clock, launcher, outside, scenario, sender } = this.p;
    const now = clock.now();
    const t = now.getTime();
    const candidates: number[] = [];
    // Strictly later instants are candidates; what is due now was read into `due` for this instant's pass.
    const add = (d: Date | number | null | undefined) => {
      const ms = d instanceof Date ? d.getTime() : d;
      if (ms !== null && ms !== undefined && Number.isFinite(ms) && ms > t) candidates.push(ms);
    };

    const r = await lookAtLedger(deps, now, launcher.heldRunIds());

    add(r.nextSend);
    add(r.nextLease);
    // Due rows the sender left alone are waiting for their channel's pacing slot.
    for (const destination of r.waiting ?? []) add(sender.pacer.readyAt(destination));
    // A refresher that is ready and still left a root (or a storm message: ended, or a member's newer event sent) stale had a failed update, or no slot: it tries again a slot later.
    const stale = r.staleRoots || (await dueStorm(deps, now)) !== undefined;
    if (stale) add(this.refresherReadyAt > t ? this.refresherReadyAt : t + ROOT_UPDATE_INTERVAL_MS);
    const idle = !stale && !r.held && !(r.waiting ?? []).length;
    this.outboxIdleUntil = idle ? Math.min(...[r.nextSend, r.nextLease].map((d) => d?.getTime() ?? Infinity)) : undefined;

    if (!outboxOnly) {
      const missedChecks = await this.missedTickChecks();
      // Held runs' leases are renewed at every instant; only a lease nobody renews can run out.
      const freshness = Math.min(...[r.nextDeadline, r.nextRunLease].map((d) => d?.getTime() ?? Infinity), ...missedChecks);
      const duration = (await nextDurationCheckAt(deps.db, now))?.getTime() ?? Infinity; // running long, completion deadlines
      // Storms end and shared causes are called out by the escalation clock too, each when its own time comes.
      const stormClock = (await stormClockDueAt(deps, now))?.getTime() ?? Infinity;
      // When the earliest open warning escalates (now, for one that kept failing): with none, an open alert alone gives the clock nothing to do.
      const escalation = r.anyOpen ? ((await nextEscalation(deps, now)) ?? Infinity) : Infinity;
      this.due = { tick: r.nextTick?.getTime() ?? Infinity, freshness, duration, silenceEnd: r.silenceEnd?.getTime() ?? NaN, escalation, clockWork: r.clockWork, stormClock };
      add(duration);
      add(r.nextTick);
      add(outside.nextTickAt());
      add(launcher.nextEndAt());
      add(freshness);
      add(r.silenceEnd);
      add(this.scripted.nextAt());
      // The escalation clock's timed work: a deadline, or a warning that kept failing (due at once); a silence's
      // end is added above. The first instant on its grid after the earliest.
      const clockDue = r.clockWork ? t + 1 : Math.min(stormClock, escalation);
      if (Number.isFinite(clockDue)) {
        const since = Math.max(clockDue, t + 1) - scenario.start.getTime();
        add(scenario.start.getTime() + Math.ceil(since / this.escalationMs) * this.escalationMs);
      }
    }
    return candidates.length ? new Date(Math.min(...candidates)) : undefined;
  }

  /** Observed workflows: the freshness detector records a tick missed (or skipped) at tick + grace, its window's end. */
  private async missedTickChecks(): Promise<number[]> {
    if (!this.p.scenario.workflows.some((w) => w.mode === 'observed')) return [];
    const observed = await this.p.deps.db
      .selectFrom('workflows')
      .select(['id', 'cron', 'timezone', 'policy', 'nextTickAt'])
      .where('mode', '=', 'observed')
      .where('enabled', '=', true)
      .where('monitoring', '=', true)
      .where('paused', '=', false)
      .where('nextTickAt', 'is not', null)
      .execute();
    return observed.map((w) => {
      let grace = this.graceMs.get(w.id);
      if (grace === undefined) {
        grace = profileFor(w.cron, w.timezone, w.policy, w.nextTickAt!).graceSeconds * 1000;
        this.graceMs.set(w.id, grace);
      }
      // The tick is judged when its window closes (later than tick + grace on a DST night: domain/observed-dst.ts).
      return windowClosesAt(observedTickWindow(w.cron, w.timezone, w.nextTickAt!), grace).getTime();
    });
  }
}

/** Calls a loop tick until it finds nothing; true when it found something at least once. */
async function repeat(tick: () => Promise<boolean>): Promise<boolean> {
  let any = false;
  for (let i = 0; i < MAX_ROUNDS; i++) {
    if (!(await tick())) return any;
    any = true;
  }
  throw new Error('a loop kept finding work without end');
}
