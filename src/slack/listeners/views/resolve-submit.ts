import type { App } from '@slack/bolt';
import { RESOLVE_NOTE_MAX, resolveByHand } from '../../../ledger/alert-actions.js';
import { RESOLVE_FIELD, VIEW } from '../../blocks/ids.js';
import { alertHere } from '../alert-here.js';
import { scopeForChannel, UNLINKED_TEXT } from '../tenancy.js';
import { refuse } from '../actions/alert-action.js';
import { actionRefusal } from '../answers.js';
import type { SlackContext } from '../context.js';
import { resolveSubmission } from '../payloads.js';
import { updateClickedRoot } from './update-clicked-root.js';
import { answeredSubmission } from './answered-submission.js';

const NOTE = RESOLVE_FIELD.note;

/**
 * The note is checked before the ack, so an empty one shows inline in the
 * modal; the rights check and the resolve run after. On success the root the
 * button was clicked on is re-rendered at once (chat.update: a submission has
 * no response_url); the thread reply goes through the outbox, exactly once.
 */
export function registerResolveSubmit(app: App, ctx: SlackContext): void {
  app.view(VIEW.resolve, answeredSubmission(ctx, 'resolve', NOTE.block, async ({ ack, body, client }) => {
    const parsed = resolveSubmission.safeParse(body);
    if (!parsed.success) {
      await ack({ response_action: 'errors', errors: { [NOTE.block]: `Could not read the form: ${parsed.error.issues[0]?.message ?? 'invalid'}` } });
      return;
    }
    const { user, view } = parsed.data;
    const note = view.state.values[NOTE.block]?.[NOTE.action]?.value?.trim() ?? '';
    if (!note) {
      await ack({ response_action: 'errors', errors: { [NOTE.block]: 'A note is required: say why the alert can be closed by hand.' } });
      return;
    }
    if (note.length > RESOLVE_NOTE_MAX) {
      await ack({ response_action: 'errors', errors: { [NOTE.block]: `The note is ${note.length} characters; keep it under ${RESOLVE_NOTE_MAX}.` } });
      return;
    }
    await ack();
    const { alertId, channel, messageTs } = view.private_metadata;
    const tell = (text: string) => client.chat.postEphemeral({ channel, user: user.id, text });
    const where = await scopeForChannel(ctx.deps.db, ctx.deps.config, channel);
    if (where.kind === 'unlinked') return void (await tell(UNLINKED_TEXT));
    const found = await alertHere(ctx, { alertId, user: user.id, channel, scope: where.scope }, 'resolve');
    if ('refusal' in found) return void (await tell(found.refusal));
    const refusal = await refuse(ctx, user.id, 'resolve', found.tenant);
    if (refusal) return void (await tell(refusal));
    const result = await resolveByHand(ctx.deps, { alertId, actor: { user: user.id, channel }, scope: where.scope, note });
    if (result.kind === 'not_found') ctx.deps.logger.warn({ alertId, user: user.id, channel }, 'refused resolve: alert not in scope');
    const answer = actionRefusal(result);
    if (answer) return void (await tell(answer));
    if (messageTs) await updateClickedRoot(ctx, client, { alertId, channel, ts: messageTs });
  }));
}
