import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunRow } from '../../src/ledger/runs.js';
import { newRunRow } from '../../src/ledger/runs.js';
import { applyCandidate, checkCandidatePolicy } from '../../src/replay/candidate-policy.js';
import { comparePolicies, outcomeOf, renderComparison, type PolicyOutcome } from '../../src/replay/compare-policies.js';
import { scenarioFromLedger } from '../../src/replay/from-ledger.js';
import { startReplayServer, type ReplayServer } from '../../src/replay/replay-database.js';
import { replayScenario } from '../../src/replay/replay-scenario.js';
import { checkScenario, type ScenarioInput } from '../../src/replay/scenario.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';

/**
 * A real week in the ledger (hourly and daily workflows, one flapping, one
 * long outage, a skipped tick and a manual run), turned into a scenario and
 * replayed under the policies in force and under a candidate. The oracle is
 * a scenario written here from the same week, replayed directly under each
 * policy: `--from-db` must report exactly what the engine does with it.
 */

const SINCE = new Date('2026-03-02T00:00:00Z');
const UNTIL = new Date('2026-03-09T00:00:00Z');
const HOUR = 3_600_000;

type Attempt = { status: 'succeeded' } | { status: 'failed'; error: string };
const ok: Attempt = { status: 'succeeded' };
const fail = (error: string): Attempt => ({ status: 'failed', error });

/** The week, per workflow and tick: the attempts as they happened. */
function week() {
  const flappy = new Map<number, Attempt[]>();
  const outage = new Map<number, Attempt[]>();
  for (let t = SINCE.getTime(); t < UNTIL.getTime(); t += HOUR) {
    const h = (t - SINCE.getTime()) / HOUR;
    // Day 2, 08:00–19:00: fail, fail, succeed, over and over (each failure after its two retries).
    const flapping = h >= 32 && h < 44 && (h - 32) % 3 !== 2;
    flappy.set(t, flapping ? [fail('HTTP 503 from api.vendor.example'), fail('HTTP 503 from api.vendor.example'), fail('HTTP 503 from api.vendor.example')] : [ok]);
    // Day 4, 10:00–19:00: every attempt fails; recovered on attempt 2 at 03:00 that day.
    const down = h >= 82 && h < 92;
    outage.set(t, down ? [fail('connection to warehouse-7 refused'), fail('connection to warehouse-7 refused'), fail('connection to warehouse-7 refused')] : h === 75 ? [fail('deadlock detected'), ok] : [ok]);
  }
  return { 'hourly-flappy': flappy, 'hourly-outage': outage };
}

let database: TestDatabase;
let server: ReplayServer;

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startReplayServer(inject('pgAdminUrl'), (await import('../../src/log.js')).silentLogger);
  const { db } = database;
  await makeTenant(db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  for (const [name, ticks] of Object.entries(week())) {
    const wf = await makeWorkflow(db, { name, cron: '0 * * * *', mode: 'managed', launcher: JSON.stringify({ kind: 'command', command: 'true' }) });
    const rows: RunRow[] = [];
    for (const [t, attempts] of ticks) {
      const tick = new Date(t);
      // The bot was down for one tick on day 6: skipped, neither failure nor success.
      if (name === 'hourly-outage' && t === SINCE.getTime() + 130 * HOUR) {
        rows.push(newRunRow({ workflowId: wf.id, tick, trigger: 'schedule', status: 'skipped', processedAt: tick }));
        continue;
      }
      const last = attempts[attempts.length - 1]!;
      rows.push(runRow(wf.id, tick, 1, null, attempts[0]!, last.status));
    }
    const inserted = await db.insertInto('runs').values(rows).returning(['id', 'tick']).execute();
    const idOf = new Map(inserted.map((r) => [r.tick!.getTime(), r.id]));
    const retries: RunRow[] = [];
    for (const [t, attempts] of ticks) {
      attempts.slice(1).forEach((a, i) => retries.push(runRow(wf.id, new Date(t), i + 2, idOf.get(t)!, a, a.status)));
    }
    if (retries.length) await db.insertInto('runs').values(retries).execute();
    // A manual run: not in any scenario.
    await db.insertInto('runs').values(newRunRow({ workflowId: wf.id, tick: null, trigger: 'manual', status: 'succeeded', startedAt: new Date(SINCE.getTime() + 50 * HOUR), finishedAt: new Date(SINCE.getTime() + 50 * HOUR + 60_000) })).execute();
  }
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await database?.drop();
});

function runRow(workflowId: number, tick: Date, attempt: number, originalRunId: number | null, a: Attempt, verdict: 'succeeded' | 'failed'): RunRow {
  const startedAt = new Date(tick.getTime() + (attempt - 1) * 120_000);
  return newRunRow({
    workflowId,
    tick,
    trigger: attempt === 1 ? 'schedule' : 'retry',
    attempt,
    originalRunId,
    status: attempt === 1 ? verdict : a.status,
    attemptStatus: a.status,
    attemptError: a.status === 'failed' ? a.error : null,
    error: verdict === 'failed' && a.status === 'failed' ? a.error : null,
    startedAt,
    finishedAt: new Date(startedAt.getTime() + 90_000),
    processedAt: new Date(startedAt.getTime() + 90_000),
  });
}

/** The oracle: the same week written as a scenario by hand, one rule per tick. */
function handWritten(policy: Record<string, unknown>): ScenarioInput {
  const outcomes = Object.entries(week()).flatMap(([name, ticks]) =>
    [...ticks]
      .filter(([t]) => !(name === 'hourly-outage' && t === SINCE.getTime() + 130 * HOUR))
      .map(([t, attempts]) => ({ workflow: name, from: new Date(t).toISOString(), to: new Date(t).toISOString(), durationSeconds: 90, attempts })),
  );
  return {
    start: SINCE.toISOString(),
    until: UNTIL.toISOString(),
    tenants: [{ id: 'acme', name: 'Acme', channel: 'CACME' }],
    workflows: ['hourly-flappy', 'hourly-outage'].map((name) => ({ tenant: 'acme', name, cron: '0 * * * *', policy, mode: 'managed' as const })),
    outcomes,
  };
}

async function replayDirectly(input: ScenarioInput): Promise<PolicyOutcome> {
  const scratch = await server.createDatabase();
  try {
    const result = await replayScenario(checkScenario(input), { db: scratch.db });
    return await outcomeOf(scratch.db, result);
  } finally {
    await scratch.drop();
  }
}

const comparable = (o: PolicyOutcome) => ({ alertsOpened: o.alertsOpened, timeToFirstAlertSeconds: o.timeToFirstAlertSeconds, escalations: o.escalations, notificationsPerChannel: o.notificationsPerChannel, incidents: o.incidents });

describe('replay --from-db', { timeout: 600_000 }, () => {
  it('turns a week of the ledger into a scenario: one rule per run of identical ticks, what cannot be replayed named', async () => {
    const { scenario, notes, policies } = await scenarioFromLedger(database.db, { tenant: 'acme', since: SINCE, until: UNTIL });
    const parsed = checkScenario(scenario);
    expect(parsed.workflows.map((w) => w.name)).toEqual(['hourly-flappy', 'hourly-outage']);
    expect(policies).toEqual({ 'hourly-flappy': {}, 'hourly-outage': {} });
    // 168 ticks each, folded: far fewer rules than ticks, and every recorded attempt kept.
    expect(parsed.outcomes.length).toBeLessThan(40);
    const outage = parsed.outcomes.filter((o) => o.workflow === 'acme/hourly-outage' && o.attempts.length === 3);
    expect(outage).toHaveLength(1);
    expect(outage[0]!.from!.toISOString()).toBe('2026-03-05T10:00:00.000Z');
    expect(outage[0]!.to!.toISOString()).toBe('2026-03-05T19:00:00.000Z');
    expect(outage[0]!.attempts[2]).toEqual({ status: 'failed', error: 'connection to warehouse-7 refused' });
    const recovered = parsed.outcomes.find((o) => o.workflow === 'acme/hourly-outage' && o.attempts.length === 2);
    expect(recovered?.attempts).toEqual([{ status: 'failed', error: 'deadlock detected' }, { status: 'succeeded' }]);
    expect(notes).toEqual(expect.arrayContaining([expect.stringMatching(/^2 manual run/), expect.stringMatching(/^1 tick\(s\) skipped/)]));
  });

  // Was a candidate alertAfter of 4: the flapping stretch (two failures in three, 7 of its last 10 runs at worst) now
  // fails intermittently under it (max(5, alertAfter) of the last 10). A candidate of 8 is above that: it keeps control.
  it('under a candidate alertAfter of 8 the flapping incident disappears and the outage alerts six ticks later, exactly as direct replays of the week say', async () => {
    const { scenario, notes } = await scenarioFromLedger(database.db, { tenant: 'acme', since: SINCE, until: UNTIL });
    const candidate = checkCandidatePolicy({ alertAfter: 8 }, 'candidate.json');
    const comparison = await comparePolicies(server, scenario, applyCandidate(scenario, candidate));

    const [inForce, underCandidate] = [await replayDirectly(handWritten({})), await replayDirectly(handWritten({ alertAfter: 8 }))];
    expect(comparable(comparison.baseline)).toEqual(comparable(inForce));
    expect(comparable(comparison.candidate)).toEqual(comparable(underCandidate));

    // What the week says, independently of the replays agreeing with each other.
    // In force: the flapping stretch opens alerts (the first closes on one success before the pattern shows; the
    // next is held open by the flapping hysteresis); under the candidate it never reaches eight failures in a row, nor
    // eight of its last ten runs (failing intermittently).
    const flappy = comparison.baseline.incidents.filter((i) => i.workflow === 'hourly-flappy');
    expect(flappy.length).toBeGreaterThanOrEqual(1);
    expect(comparison.baseline.incidents.filter((i) => i.workflow === 'hourly-outage')).toHaveLength(1);
    expect(comparison.candidate.incidents.map((i) => i.workflow)).toEqual(['hourly-outage']);
    expect(comparison.disappeared).toEqual(flappy);
    expect(comparison.appeared).toEqual([]);
    const outageOpened = (o: PolicyOutcome) => Date.parse(o.incidents.find((i) => i.workflow === 'hourly-outage')!.openedAt);
    expect(outageOpened(comparison.candidate) - outageOpened(comparison.baseline)).toBe(6 * HOUR);

    const text = renderComparison(comparison, 'acme last week', notes);
    expect(text).toMatch(new RegExp(`alerts opened\\s+${inForce.alertsOpened}\\s+${underCandidate.alertsOpened}`));
    expect(text).toMatch(new RegExp(`escalations\\s+${inForce.escalations}\\s+${underCandidate.escalations}`));
    expect(text).toMatch(new RegExp(`messages in CACME\\s+${inForce.notificationsPerChannel.CACME}\\s+${underCandidate.notificationsPerChannel.CACME}`));
    expect(text).toContain(`incidents only under the policies in force: ${flappy.length}`);
    expect(text).toContain('hourly-flappy: warning opened 2026-03-03');
  });

  it('refuses a candidate naming a workflow that is not replayed, and a candidate with a bad field, naming the path', async () => {
    const { scenario } = await scenarioFromLedger(database.db, { tenant: 'acme', workflow: 'hourly-outage', since: SINCE, until: UNTIL });
    expect(() => applyCandidate(scenario, checkCandidatePolicy({ workflows: { 'hourly-flappy': { alertAfter: 2 } } }, 'c.json'), 'c.json')).toThrow(/workflows\.hourly-flappy: not a replayed workflow/);
    expect(() => checkCandidatePolicy({ alertAfter: 0 }, 'c.json')).toThrow(/alertAfter/);
    await expect(scenarioFromLedger(database.db, { tenant: 'ghost', since: SINCE, until: UNTIL })).rejects.toThrow(/no tenant "ghost"/);
  });
});
