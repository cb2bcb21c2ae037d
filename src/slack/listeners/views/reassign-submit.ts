import type { App } from '@slack/bolt';
import { reassign } from '../../../ledger/alert-actions.js';
import { VIEW } from '../../blocks/ids.js';
import { alertHere } from '../alert-here.js';
import { scopeForChannel, UNLINKED_TEXT } from '../tenancy.js';
import { refuse } from '../actions/alert-action.js';
import { actionRefusal } from '../answers.js';
import { assigneeRefusal } from '../rights.js';
import type { SlackContext } from '../context.js';
import { reassignSubmission } from '../payloads.js';
import { updateClickedRoot } from './update-clicked-root.js';
import { answeredSubmission } from './answered-submission.js';

/**
 * The form is checked before the ack so a missing note shows inline in the
 * modal (that is the only way to show it); the change itself runs after, and
 * on success the root the button was clicked on is re-rendered at once (as
 * for Resolve…); the thread reply goes through the outbox, exactly once.
 */
export function registerReassignSubmit(app: App, ctx: SlackContext): void {
  app.view(VIEW.reassign, answeredSubmission(ctx, 'reassign', 'note', async ({ ack, body, client }) => {
    const parsed = reassignSubmission.safeParse(body);
    if (!parsed.success) {
      await ack({ response_action: 'errors', errors: { team: `Could not read the form: ${parsed.error.issues[0]?.message ?? 'invalid'}` } });
      return;
    }
    const { user, view } = parsed.data;
    const team = view.state.values.team.team.selected_option?.value ?? 'engineering';
    const note = view.state.values.note.note.value?.trim() || null;
    const owner = view.state.values.user.user.selected_user || null;
    if (team === 'customer' && !note) {
      await ack({ response_action: 'errors', errors: { note: 'Say what the customer should do: a note is required when handing an alert to the customer.' } });
      return;
    }
    await ack();
    const { alertId, channel, messageTs } = view.private_metadata;
    const tell = (text: string) => client.chat.postEphemeral({ channel, user: user.id, text });
    const where = await scopeForChannel(ctx.deps.db, ctx.deps.config, channel);
    if (where.kind === 'unlinked') return void (await tell(UNLINKED_TEXT));
    const found = await alertHere(ctx, { alertId, user: user.id, channel, scope: where.scope }, 'reassign');
    if ('refusal' in found) return void (await tell(found.refusal));
    const refusal = (await refuse(ctx, user.id, 'reassign', found.tenant)) ?? (owner ? await assigneeRefusal({ assignee: owner, tenant: found.tenant }, ctx.deps.config, ctx.directory) : undefined);
    if (refusal) return void (await tell(refusal));
    const result = await reassign(ctx.deps, { alertId, actor: { user: user.id, channel }, scope: where.scope, team, user: owner, note });
    if (result.kind === 'not_found') ctx.deps.logger.warn({ alertId, user: user.id, channel }, 'refused reassign: alert not in scope');
    const answer = actionRefusal(result);
    if (answer) return void (await tell(answer));
    if (messageTs) await updateClickedRoot(ctx, client, { alertId, channel, ts: messageTs });
  }));
}
