import { sql } from 'kysely';
import type { Run } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { insertReportedFinished, insertReportedRunning, lockReportedWorkflow, matchTick, pingKeyKnown } from '../ledger/reported-runs.js';
import type { RunOutcome } from '../ledger/runs.js';
import { exitStatusText } from '../domain/exit-status.js';
import { repeatedReport } from '../domain/reported-outcome.js';
import { errorLineOf } from '../domain/error-line.js';
import { finishRunEvaluated, reportedTransaction } from '../engine/evaluate-now.js';

/**
 * Healthchecks-style pings: `/ping/<key>/start`, then `/ping/<key>` (success),
 * `/ping/<key>/fail` or `/ping/<key>/<exit code>`. The workflow's ping key is
 * the credential. An end pairs with the start of the same `rid`, or without
 * one with the newest start that had none, else with the newest start that
 * had one; an end with no start is recorded as a finished run on its own.
 */

import type { PingSignal } from '../domain/ping-parameters.js';
export type { PingSignal } from '../domain/ping-parameters.js';

export interface Ping {
  key: string;
  signal: PingSignal;
  rid?: string;
  /** The request body, already cut to the excerpt limit. */
  body?: string;
}

export type PingResult = { kind: 'recorded'; run: Run } | { kind: 'not_found' };

const ridKey = (rid: string) => `ping:${rid}`;

export function outcomeOfPing(signal: Exclude<PingSignal, { kind: 'start' }>, body: string | undefined): RunOutcome {
  const succeeded = signal.kind === 'success' || (signal.kind === 'exit' && signal.code === 0);
  const exitCode = signal.kind === 'exit' ? signal.code : null;
  const logExcerpt = body ? body : null;
  if (succeeded) return { status: 'succeeded', exitCode, logExcerpt };
  // The last line a job printed is usually its error (as a terminal shows it); it is also what error groups are made from.
  const last = errorLineOf(body);
  const status = exitCode !== null ? exitStatusText(exitCode, null) : 'reported failed';
  return { status: 'failed', exitCode, logExcerpt, error: last ? `${status}: ${last}` : status };
}

/** Before a ping's body is read: does its key name a workflow at all? */
/** The tenant of the enabled workflow whose key this is, or undefined. */
export function pingKeyTenant(deps: Pick<Deps, 'db'>, key: string): Promise<string | undefined> {
  return pingKeyKnown(deps.db, key);
}

export async function recordPing(deps: Deps, ping: Ping): Promise<PingResult> {
  const now = deps.clock.now();
  const externalId = ping.rid ? ridKey(ping.rid) : null;
  // A reported end is evaluated in this transaction (src/engine/evaluate-now.ts): its alert commits with it.
  const decided = await reportedTransaction(deps, now, async (trx, evaluate): Promise<PingResult | { kind: 'finish'; run: Run }> => {
    const workflow = await lockReportedWorkflow(trx, { pingKey: ping.key });
    if (!workflow) return { kind: 'not_found' };

    const sameRid = externalId
      ? await trx.selectFrom('runs').selectAll().where('workflowId', '=', workflow.id).where('externalId', '=', externalId).executeTakeFirst()
      : undefined;

    if (ping.signal.kind === 'start') {
      // A repeated start (curl --retry) is the same run.
      if (sameRid) return { kind: 'recorded', run: sameRid };
      // Without a rid, a start of a tick already started (and still running) is that start again (isRepeatedStart).
      const match = await matchTick(trx, workflow, now, { startWithoutRid: !externalId });
      if (match.repeatedStart) return { kind: 'recorded', run: match.repeatedStart };
      const run = await insertReportedRunning(trx, { workflow, match, externalId }, now);
      if (!run) throw new Error(`ping start for workflow ${workflow.id}: the run row was not inserted`);
      return { kind: 'recorded', run };
    }

    const started = externalId
      ? sameRid
      : await trx
          .selectFrom('runs')
          .selectAll()
          .where('workflowId', '=', workflow.id)
          .where('status', '=', 'running')
          // Reported runs only: a run the bot launched itself is ended by its launcher, not by a ping.
          .where('leaseOwner', 'is', null)
          // The newest start without a rid, else (the end forgot its rid) the newest ping start with one, as
          // Healthchecks ends a start whatever its rid on an end without one: left running, that start timed out
          // hours later as a failure of a job that had succeeded. A run reported over the API keeps its own end.
          .where((eb) => eb.or([eb('externalId', 'is', null), eb('externalId', 'like', 'ping:%')]))
          .orderBy(sql`external_id is null`, 'desc')
          .orderBy('startedAt', 'desc')
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst();
    if (started?.status === 'running') return { kind: 'finish', run: started };
    // The job's own end of a start the bot failed as timed out: kept on that run (repeatedReport's late end).
    if (started && repeatedReport(started, outcomeOfPing(ping.signal, ping.body).status) === 'late_end') return { kind: 'finish', run: started };
    // A repeated end of a finished rid run is the same report, not a new run.
    if (started) return { kind: 'recorded', run: started };
    const run = await insertReportedFinished(trx, { workflow, match: await matchTick(trx, workflow, now, { endOnly: true }), externalId }, outcomeOfPing(ping.signal, ping.body), now);
    // matchTick gave a tick only when it had no row (or a missed one to take over), under the workflow's lock: a conflict here is a bug, not a report to drop.
    if (!run) throw new Error(`ping end for workflow ${workflow.id}: the run row was not inserted`);
    await evaluate(workflow.id, run.id);
    return { kind: 'recorded', run };
  });
  if (decided.kind !== 'finish') return decided;
  const finished = await finishRunEvaluated(deps, decided.run.id, outcomeOfPing(ping.signal as Exclude<PingSignal, { kind: 'start' }>, ping.body));
  return finished.kind === 'not_found' ? { kind: 'not_found' } : { kind: 'recorded', run: finished.run };
}
