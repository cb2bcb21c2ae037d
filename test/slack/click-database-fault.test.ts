import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { ACTION } from '../../src/slack/blocks/ids.js';
import { resolveMetadata } from '../../src/slack/blocks/resolve-modal.js';
import type { TestDatabase } from '../helpers/db.js';
import { fireTick, type Engine } from '../helpers/engine-harness.js';
import { minutes } from '../helpers/factories.js';
import { eventually, type SlackRig } from '../helpers/slack-bolt.js';
import { submitResolve, usePeopleRig } from '../helpers/people-rig.js';

/**
 * A person clicks while the database refuses the write (read-only during a
 * failover, here a trigger answering SQLSTATE 25006 as a read-only database
 * does) or the command's: they are told, in words, that nothing changed and
 * to try again, rather than the button doing nothing at all.
 */
const START = new Date('2026-03-10T00:00:00Z');
const people = usePeopleRig(START);
let t: TestDatabase;
let engine: Engine;
let rig: SlackRig;
beforeAll(() => void ({ t, engine, rig } = people));

async function readOnlyAlerts(): Promise<() => Promise<void>> {
  await sql
    .raw(
      `create or replace function read_only() returns trigger language plpgsql as $$
       begin raise exception 'cannot execute UPDATE in a read-only transaction' using errcode = '25006'; end $$;
       create trigger read_only_alerts before update on alerts for each row execute function read_only();`,
    )
    .execute(t.db);
  return async () => void (await sql`drop trigger read_only_alerts on alerts`.execute(t.db));
}

const ephemeralSince = (before: number) =>
  eventually(() => {
    const r = rig.slack.responses.slice(before).find((x) => x.body.response_type === 'ephemeral');
    if (!r) throw new Error('no answer yet');
    return String(r.body.text);
  }, 5_000);

it('Take ownership while the database is read-only: the clicker hears that nothing changed; a click after it works', async () => {
  const wf = await people.workflow('0 * * * *', { retries: 0, alertAfter: 1 });
  engine.clock.set(new Date(START.getTime() + minutes(61)));
  await fireTick(engine, wf, new Date(START.getTime() + minutes(60)), { status: 'failed', error: 'boom' });
  await engine.drain();
  const alert = await t.db.selectFrom('alerts').selectAll().where('workflowId', '=', wf.id).executeTakeFirstOrThrow();
  const writable = await readOnlyAlerts();
  try {
    const before = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    expect(await ephemeralSince(before)).toBe("I couldn't record that: the database is read-only (a failover in progress?) and refuses writes. Nothing changed; try again in a minute.");
  } finally {
    await writable();
  }
  expect((await t.db.selectFrom('alerts').select('ownerUser').where('id', '=', alert.id).executeTakeFirstOrThrow()).ownerUser).toBeNull();

  await rig.click({ actionId: ACTION.takeOwnership, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
  await eventually(async () => expect((await t.db.selectFrom('alerts').select('ownerUser').where('id', '=', alert.id).executeTakeFirstOrThrow()).ownerUser).toBe('U0ALICE'));
});

it('a command while the database refuses: the same answer, not silence', async () => {
  const writable = await readOnlyAlerts();
  try {
    const { name } = await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('workflows.name').executeTakeFirstOrThrow();
    const before = rig.slack.responses.length;
    await rig.command(`release ${name}`, { channel: 'CACME', user: 'U0ALICE' });
    expect(await ephemeralSince(before)).toBe("I couldn't record that: the database is read-only (a failover in progress?) and refuses writes. Nothing changed; try again in a minute.");
  } finally {
    await writable();
  }
});

/** A trigger raising an ordinary error stands for a bug: not the database's fault, so not "nothing changed". */
async function brokenAlerts(): Promise<() => Promise<void>> {
  await sql
    .raw(
      `create or replace function broken() returns trigger language plpgsql as $$
       begin raise exception 'relation "secret_internal_table" is broken'; end $$;
       create trigger broken_alerts before update on alerts for each row execute function broken();`,
    )
    .execute(t.db);
  return async () => void (await sql`drop trigger broken_alerts on alerts`.execute(t.db));
}

const BUG_ANSWER = /^Something went wrong on my side answering that \(reference `[0-9a-f]{8}`, in the bot's log for the operator\)\. It may not have been applied: check `\/scheduler status` before trying again\.$/;

it('a click or a command that fails for another reason (a bug) is answered with a reference, never the error, and not left silent', async () => {
  const alert = await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select(['alerts.id', 'workflows.name']).where('alerts.status', '=', 'open').executeTakeFirstOrThrow();
  const fixed = await brokenAlerts();
  try {
    let before = rig.slack.responses.length;
    await rig.click({ actionId: ACTION.release, value: String(alert.id), channel: 'CACME', user: 'U0ALICE' });
    const click = await ephemeralSince(before);
    expect(click).toMatch(BUG_ANSWER);
    expect(click).not.toContain('secret_internal_table');

    before = rig.slack.responses.length;
    await rig.command(`release ${alert.name}`, { channel: 'CACME', user: 'U0ALICE' });
    const command = await ephemeralSince(before);
    expect(command).toMatch(BUG_ANSWER);
    expect(command).not.toBe(click);
  } finally {
    await fixed();
  }
});

it('a modal submission that fails for a bug: the submitter hears a reference privately in the channel, never the error', async () => {
  const alert = await t.db.selectFrom('alerts').select('id').where('status', '=', 'open').executeTakeFirstOrThrow();
  const fixed = await brokenAlerts();
  try {
    const before = rig.slack.callsTo('chat.postEphemeral').length;
    const answered = await submitResolve(rig, resolveMetadata({ alertId: alert.id, channel: 'CACME', messageTs: null }), 'U0LEAD', 'restored by hand');
    expect(answered.status).toBe(200);
    expect(answered.text).toBe('');
    const told = await eventually(() => rig.slack.callsTo('chat.postEphemeral').slice(before)[0] ?? Promise.reject(new Error('no answer yet')), 5_000);
    expect(told).toMatchObject({ channel: 'CACME', args: { user: 'U0LEAD' } });
    expect(String(told.text)).toMatch(BUG_ANSWER);
    expect(String(told.text)).not.toContain('secret_internal_table');
  } finally {
    await fixed();
  }
  expect((await t.db.selectFrom('alerts').select('status').where('id', '=', alert.id).executeTakeFirstOrThrow()).status).toBe('open');
});
