import type { Db } from '../db/connect.js';
import type { Run } from '../db/schema.js';
import { fireTimesBetween } from '../domain/schedule.js';
import type { ScenarioInput } from './scenario.js';

/**
 * The ledger's scheduled ticks as scenario outcomes: each tick's attempts in
 * order, consecutive ticks that did the same folded into one rule. Read a
 * page of ticks at a time (their original rows by the `runs_history` index,
 * then their attempts by `runs_attempts`), so a month of a minutely workflow
 * holds one page of rows in memory, not the month's.
 */

type Attempt = { status: 'succeeded'; rows?: number } | { status: 'failed'; error?: string; stage?: string; rows?: number } | { status: 'missing' };
type Outcome = NonNullable<ScenarioInput['outcomes']>[number];

const MAX_DURATION_SECONDS = 7 * 86_400;
const MAX_TEXT = 2_000;
/** Ticks read per statement. */
export const TICK_PAGE = 2_000;

export interface FoldedTicks {
  outcomes: Outcome[];
  /** Workflows with a tick nobody started: only an outside scheduler can replay them. */
  missingIn: Set<number>;
  skipped: number;
  manualTicks: number;
  /** Workflow name → its schedule's ticks in the period that have no row in the ledger (paused, disabled, not watched). */
  unrecorded: Map<string, number>;
}

/** Fire times counted at most: a minutely schedule over a replay's longest span (31 days) has 44,640. */
const MAX_COUNTED_TICKS = 50_000;

export async function foldLedgerTicks(db: Db, workflows: { id: number; name: string; cron: string; timezone: string }[], since: Date, until: Date, page = TICK_PAGE): Promise<FoldedTicks> {
  const folded: FoldedTicks = { outcomes: [], missingIn: new Set(), skipped: 0, manualTicks: 0, unrecorded: new Map() };
  for (const w of workflows) {
    const fold = ruleFolder(w.name, folded);
    let recorded = 0;
    let after: Date | undefined;
    for (;;) {
      let query = db
        .selectFrom('runs')
        .selectAll()
        .where('workflowId', '=', w.id)
        .where('originalRunId', 'is', null)
        .where('tick', '>=', since)
        .where('tick', '<=', until)
        .orderBy('tick')
        .limit(page);
      if (after) query = query.where('tick', '>', after);
      const originals = await query.execute();
      if (originals.length === 0) break;
      recorded += originals.length;
      const attempts = await db.selectFrom('runs').selectAll().where('originalRunId', 'in', originals.map((r) => r.id)).orderBy('attempt').execute();
      const of = new Map<number, Run[]>();
      for (const a of attempts) of.set(a.originalRunId!, [...(of.get(a.originalRunId!) ?? []), a]);
      for (const original of originals) fold.tick(w.id, original, of.get(original.id) ?? []);
      if (originals.length < page) break;
      after = originals[originals.length - 1]!.tick!;
    }
    fold.flush();
    // The replay fires every tick of the schedule: one the ledger has no row for is replayed as a success.
    const scheduled = fireTimesBetween(w.cron, w.timezone, new Date(since.getTime() - 1), until, MAX_COUNTED_TICKS).length;
    if (scheduled > recorded) folded.unrecorded.set(w.name, scheduled - recorded);
  }
  return folded;
}

/** Folds one workflow's ticks, in order, into `into.outcomes`. */
function ruleFolder(name: string, into: FoldedTicks) {
  let open: { key: string; from: Date; to: Date; attempts: Attempt[]; durationSeconds: number } | undefined;
  const flush = () => {
    if (open) into.outcomes.push({ workflow: name, from: open.from.toISOString(), to: open.to.toISOString(), durationSeconds: open.durationSeconds, attempts: open.attempts });
    open = undefined;
  };
  const tick = (workflowId: number, original: Run, retries: Run[]) => {
    if (original.trigger === 'manual') {
      into.manualTicks++;
      return;
    }
    if (original.status === 'skipped') {
      into.skipped++;
      flush();
      return;
    }
    if (original.status === 'running' || original.status === 'pending_retry') return; // not decided yet: nothing to replay
    const scripted = [original, ...retries].map(attemptOf);
    if (scripted[0]!.status === 'missing') into.missingIn.add(workflowId);
    const durationSeconds = durationOf(original);
    const key = JSON.stringify([scripted, durationSeconds]);
    const at = original.tick!;
    if (open && open.key === key) open.to = at;
    else {
      flush();
      open = { key, from: at, to: at, attempts: scripted, durationSeconds };
    }
  };
  return { tick, flush };
}

/** One attempt as the scenario says it: its own outcome, not the tick's verdict written back onto the first row. */
function attemptOf(run: Run): Attempt {
  const status = run.attemptStatus ?? run.status;
  const error = run.attemptError ?? run.error;
  if (status === 'missed') return { status: 'missing' };
  if (status === 'succeeded') return run.rows === null ? { status: 'succeeded' } : { status: 'succeeded', rows: run.rows };
  return {
    status: 'failed',
    ...(error ? { error: error.slice(0, MAX_TEXT) } : {}),
    ...(run.stage ? { stage: run.stage.slice(0, MAX_TEXT) } : {}),
    ...(run.rows !== null ? { rows: run.rows } : {}),
  };
}

/**
 * The run's kept duration, else its end minus its start (rows written without one); unknown (a report
 * with only its end, stored with start = end, or a missed tick) replays as the default minute, not as zero.
 */
export function durationOf(run: Pick<Run, 'startedAt' | 'finishedAt' | 'durationSeconds'>): number {
  const elapsed = run.startedAt && run.finishedAt && run.finishedAt > run.startedAt ? (run.finishedAt.getTime() - run.startedAt.getTime()) / 1000 : null;
  const seconds = run.durationSeconds ?? elapsed;
  return seconds === null ? 60 : Math.min(MAX_DURATION_SECONDS, Math.max(0, Math.round(seconds)));
}

export { MAX_TEXT };
