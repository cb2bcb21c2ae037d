import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../src/db/schema.js';
import { ACTION, REASSIGN_FIELD, RESOLVE_FIELD, VIEW } from '../../src/slack/blocks/ids.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { eventually } from '../helpers/eventually.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { startSlackRig, type SlackRig } from '../helpers/slack-bolt.js';
import { insertAlert } from '../helpers/slack-outbox.js';

/**
 * Values in correctly signed Slack requests that no Slack client sends but a
 * forger (or a bug on Slack's side) could: JSON escapes PostgreSQL cannot store
 * and ids beyond its integers. Each is refused in words or with a 400 naming
 * the field, before anything is written; the listener never fails inside with
 * the clicker left unanswered.
 */

let t: TestDatabase;
let rig: SlackRig;
let alert: Alert;

beforeAll(async () => {
  t = await createTestDatabase();
  rig = await startSlackRig(t.db);
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *', mode: 'observed' });
  alert = await insertAlert(t.db, wf.id);
});
afterAll(async () => {
  await rig?.close();
  await t?.drop();
});

const state = async () => ({
  alert: await t.db.selectFrom('alerts').selectAll().where('id', '=', alert.id).executeTakeFirstOrThrow(),
  events: await t.db.selectFrom('alertEvents').select('id').where('alertId', '=', alert.id).execute(),
});

function submission(callbackId: string, values: Record<string, unknown>) {
  return {
    type: 'view_submission',
    team: { id: 'T0TEST' },
    user: { id: 'U0ALICE' },
    api_app_id: 'A0TEST',
    view: { id: 'V1', callback_id: callbackId, private_metadata: JSON.stringify({ alertId: alert.id, channel: 'CACME', messageTs: null }), state: { values } },
  };
}

const reassignValues = (note: string, user = 'U0ALICE') => ({
  [REASSIGN_FIELD.team.block]: { [REASSIGN_FIELD.team.action]: { type: 'static_select', selected_option: { value: 'engineering' } } },
  [REASSIGN_FIELD.user.block]: { [REASSIGN_FIELD.user.action]: { type: 'users_select', selected_user: user } },
  [REASSIGN_FIELD.note.block]: { [REASSIGN_FIELD.note.action]: { type: 'plain_text_input', value: note } },
});
const resolveValues = (note: string) => ({ [RESOLVE_FIELD.note.block]: { [RESOLVE_FIELD.note.action]: { type: 'plain_text_input', value: note } } });

describe('form values PostgreSQL cannot store', () => {
  it.each([
    ['a reassign note with a lone surrogate', VIEW.reassign, reassignValues('half \ud800 a character'), 'payload.view.state.values.note.note.value: a lone UTF-16 surrogate'],
    ['a reassign user id with a lone surrogate', VIEW.reassign, reassignValues('mine', 'U0\udc00'), 'payload.view.state.values.user.user.selected_user: a lone UTF-16 surrogate'],
    ['a resolve note with a NUL', VIEW.resolve, resolveValues('fixed\u0000it'), 'payload.view.state.values.resolve_note.resolve_note.value: NUL characters'],
  ])('%s: refused under the field in the form, nothing changed', async (_label, callbackId, values, named) => {
    const before = await state();
    const res = await rig.interact(submission(callbackId, values));
    // Slack shows a form's errors under the field; a 4xx would show only "trouble connecting".
    expect(res.status).toBe(200);
    const [, block, why] = /^payload\.view\.state\.values\.([^.]+)\.[^:]+: (.*)$/.exec(named)!;
    const answer = JSON.parse(res.text);
    expect(answer.response_action).toBe('errors');
    expect(Object.keys(answer.errors)).toEqual([block]);
    expect(answer.errors[block!]).toContain(`can't be saved: ${why}`);
    expect(await state()).toEqual(before);
  });

  it('a slash command whose text decodes to a NUL (%00): refused to the person in words, nothing changed', async () => {
    const before = await state();
    const res = await rig.command('silence nightly 1h reason\u0000here', { channel: 'CACME' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ response_type: 'ephemeral', text: "I couldn't take that command: NUL characters (\\u0000) are not allowed. Nothing was done." });
    expect(await state()).toEqual(before);
  });

  it('a slash command longer than 4,000 characters: refused in words saying how long it was, nothing changed', async () => {
    const before = await state();
    const res = await rig.command(`silence nightly 1h ${'x'.repeat(4200)}`, { channel: 'CACME' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).text).toBe("I couldn't take that command: it is 4,219 characters long, and at most 4,000 are read. Nothing was done.");
    expect(await state()).toEqual(before);
  });

  it('a malformed payload that no person typed (a block action without a user) stays a 400 naming the field', async () => {
    const res = await rig.interact({ type: 'block_actions', user: null, actions: [{ action_id: 'x' }] });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).message).toMatch(/^payload\.user/);
  });

  it('the same forms with storable text still work', async () => {
    // The assignee must be someone who could take the alert themselves: a member of its channel.
    rig.slack.channelMembers.set('CACME', ['U0ALICE']);
    const res = await rig.interact(submission(VIEW.reassign, reassignValues('taking it ✅')));
    expect(res.status).toBe(200);
    await eventually(async () => expect((await state()).alert).toMatchObject({ ownerUser: 'U0ALICE', ownerNote: 'taking it ✅' }));
  });
});

describe('a storm ⋯ menu naming an alert id beyond PostgreSQL bigint', () => {
  it.each([['9999999999999999999:take', 'storm:1:1'], ['1:take', 'storm:99999999999999999999:1']])('%s in %s: refused in words, nothing changed', async (selected, blockId) => {
    const before = await state();
    const responses = rig.slack.responses.length;
    expect((await rig.click({ actionId: ACTION.stormAlertMenu, blockId, selected, channel: 'CACME' })).status).toBe(200);
    const answer = await eventually(() => rig.slack.responses.slice(responses).find((r) => r.body.response_type === 'ephemeral') ?? Promise.reject(new Error('no answer yet')));
    expect(String(answer.body.text)).toContain("couldn't read that click");
    expect(await state()).toEqual(before);
  });
});
