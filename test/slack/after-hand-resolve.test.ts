import { beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../src/db/schema.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import type { TestDatabase } from '../helpers/db.js';
import { fireTick, type Engine } from '../helpers/engine-harness.js';
import { minutes } from '../helpers/factories.js';
import { eventually, type SlackRig } from '../helpers/slack-bolt.js';
import { usePeopleRig } from '../helpers/people-rig.js';

/**
 * After a hand resolve (`/scheduler resolve`, signed as Slack sends it), the
 * failures before it are the ones the person said were handled: the next
 * alert counts from the resolve, as after a recovery, and its "kept failing"
 * escalation needs failures after it (docs/alerts.md, resolution).
 */
const START = new Date('2026-03-10T00:00:00Z');
/** Each test's minutes count from the first whole day after the clock (the previous test left it wherever it ended). */
let base = START;
const at = (m: number) => new Date(base.getTime() + minutes(m));
const nextDay = () => {
  base = new Date(Math.ceil((engine.clock.now().getTime() + 1) / 86_400_000) * 86_400_000);
};

const people = usePeopleRig(START);
let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
beforeAll(() => void ({ t, engine, rig } = people));

const workflow = (cron: string) => people.workflow(cron);

/** The tick at minute `m` fails; the engine evaluates it and the escalation clock makes a pass. */
async function failAt(wf: Workflow, m: number) {
  engine.clock.set(new Date(Math.max(at(m).getTime() + minutes(1), engine.clock.now().getTime())));
  await fireTick(engine, wf, at(m), { status: 'failed', error: 'connect ECONNREFUSED', stage: 'upload' });
  await engine.drain();
  await runEscalationClock(engine.deps);
}

const alertsOf = (wf: Workflow) => t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).orderBy('id').execute();

async function resolveByHand(wf: Workflow) {
  const before = rig.slack.responses.length;
  await rig.command(`resolve ${wf.name} rotated the credentials`, { channel: 'CACME', user: 'U0LEAD' });
  await eventually(() => {
    const r = rig.slack.responses.slice(before).find((x) => x.body.response_type === 'ephemeral');
    if (!r) throw new Error('no answer yet');
    expect(String(r.body.text)).toContain('Resolved the alert');
    expect(String(r.body.text)).toContain('counted again from now');
  });
}

describe('the alert after a hand resolve', () => {
  it('a 5-minute job: opens after 3 failures after the resolve (not at the next one, with the old streak), and escalates only after 6 of them', async () => {
    nextDay();
    const wf = await workflow('*/5 * * * *');
    // A long streak: the alert opens at the 3rd failure; owned, so it stays a warning however long it lasts.
    for (let m = 5; m <= 50; m += 5) {
      await failAt(wf, m);
      if (m === 15) await rig.command(`ack ${wf.name}`, { channel: 'CACME', user: 'U0LEAD' });
    }
    const [first] = await alertsOf(wf);
    expect(first).toMatchObject({ status: 'open', severity: 'warning', consecutiveFailures: 10 });

    await resolveByHand(wf);
    expect((await alertsOf(wf)).map((a) => a.status)).toEqual(['resolved']);

    // The person said it was handled: one or two failures after it say nothing yet, as after a recovery.
    await failAt(wf, 55);
    await failAt(wf, 60);
    expect((await alertsOf(wf)).map((a) => a.status)).toEqual(['resolved']);

    await failAt(wf, 65);
    let [, second] = await alertsOf(wf);
    expect(second).toMatchObject({ status: 'open', severity: 'warning', consecutiveFailures: 3 });
    const opened = await t.db.selectFrom('alertEvents').select('data').where('alertId', '=', second!.id).where('kind', '=', 'opened').executeTakeFirstOrThrow();
    expect(opened.data).toMatchObject({ consecutiveFailures: 3 });

    // Kept failing: twice the failures it took to open, counted after the resolve.
    await failAt(wf, 70);
    await failAt(wf, 75);
    [, second] = await alertsOf(wf);
    expect(second).toMatchObject({ severity: 'warning', consecutiveFailures: 5 });
    await failAt(wf, 80);
    [, second] = await alertsOf(wf);
    expect(second).toMatchObject({ severity: 'critical', consecutiveFailures: 6 });
    const escalated = await t.db.selectFrom('alertEvents').select('data').where('alertId', '=', second!.id).where('kind', '=', 'escalated').executeTakeFirstOrThrow();
    expect(escalated.data).toMatchObject({ reason: 'kept_failing', consecutiveFailures: 6 });
  });

  it('a daily job (one failure opens it, critical): the next failure after the resolve opens it, counting 1', async () => {
    nextDay();
    const wf = await workflow('0 2 * * *');
    const day = (n: number) => (n * 24 + 2) * 60;
    await failAt(wf, day(0));
    await failAt(wf, day(1));
    expect((await alertsOf(wf))[0]).toMatchObject({ status: 'open', consecutiveFailures: 2 });
    await resolveByHand(wf);
    await failAt(wf, day(2));
    const [, second] = await alertsOf(wf);
    expect(second).toMatchObject({ status: 'open', severity: 'critical', consecutiveFailures: 1 });
  });

  it('a success after the resolve: the count starts at the later of the two', async () => {
    nextDay();
    const wf = await workflow('*/5 * * * *');
    for (const m of [5, 10, 15]) await failAt(wf, m);
    await resolveByHand(wf);
    for (const m of [20, 25]) await failAt(wf, m);
    engine.clock.set(new Date(Math.max(at(30).getTime() + minutes(1), engine.clock.now().getTime())));
    await fireTick(engine, wf, at(30), { status: 'succeeded' });
    await engine.drain();
    for (const m of [35, 40]) await failAt(wf, m);
    expect((await alertsOf(wf)).map((a) => a.status)).toEqual(['resolved']);
    await failAt(wf, 45);
    expect((await alertsOf(wf))[1]).toMatchObject({ status: 'open', consecutiveFailures: 3 });
  });

  it('a downstream alert that outlived its upstream, resolved by hand: the next alert is its own (no "outlived" note, no upstream link)', async () => {
    nextDay();
    const up = await people.workflow('0 * * * *', { retries: 0, alertAfter: 1 });
    const down = await workflow('*/5 * * * *');
    await t.db.insertInto('workflowDependencies').values({ workflowId: down.id, upstreamId: up.id }).execute();
    await failAt(up, 0);
    for (const m of [5, 10]) await failAt(down, m);
    engine.clock.set(new Date(Math.max(at(60).getTime() + minutes(1), engine.clock.now().getTime())));
    await fireTick(engine, up, at(60), { status: 'succeeded' });
    await engine.drain();
    const [upAlert] = await alertsOf(up);
    expect(upAlert).toMatchObject({ status: 'resolved' });
    for (const m of [65, 70, 75]) await failAt(down, m);
    const [first] = await alertsOf(down);
    expect(first).toMatchObject({ status: 'open', upstreamAlertId: upAlert!.id });
    expect(await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', first!.id).where('kind', '=', 'outlived_upstream').execute()).toHaveLength(1);

    await resolveByHand(down);
    for (const m of [80, 85, 90]) await failAt(down, m);
    const [, second] = await alertsOf(down);
    expect(second).toMatchObject({ status: 'open', consecutiveFailures: 3, upstreamAlertId: null });
    const notes = await t.db.selectFrom('alertEvents').select('kind').where('alertId', '=', second!.id).where('kind', '=', 'outlived_upstream').execute();
    expect(notes).toEqual([]);
  });
});
