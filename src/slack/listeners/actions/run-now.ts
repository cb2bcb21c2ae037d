import type { App } from '@slack/bolt';
import { requestRunNow } from '../../../services/run-now.js';
import { ACTION } from '../../blocks/ids.js';
import { alertHere } from '../alert-here.js';
import { pausedNote, runNowText } from '../answers.js';
import type { SlackContext } from '../context.js';
import { alertAction, refuse } from './alert-action.js';
import { escapeMrkdwn } from '../../blocks/limits.js';

/**
 * The button carries Slack's own confirmation dialog; by the time this runs the clicker has confirmed.
 * A run started is answered in place: the root clicked, re-rendered, shows it under way and who started it.
 */
export function registerRunNowAction(app: App, ctx: SlackContext): void {
  app.action(
    ACTION.runNow,
    alertAction(ctx, ACTION.runNow, async (a) => {
      const found = await alertHere(ctx, a, 'run now');
      if ('refusal' in found) return found.refusal;
      const refusal = await refuse(ctx, a.user, 'run_now', found.tenant);
      if (refusal) return refusal;
      // A root not yet re-rendered (or another channel's copy) still shows Run now after the alert
      // resolved: its thread would never hear of the run, so nothing starts unasked-for.
      if (found.alert.status !== 'open') {
        const name = escapeMrkdwn(found.workflow.name);
        return `This alert is already resolved, so this button starts nothing. To run *${name}* anyway: \`/scheduler run ${name}\`.`;
      }
      const result = await requestRunNow(ctx.deps, { workflowId: found.workflow.id, actor: { user: a.user, channel: a.channel }, scope: a.scope });
      // Started: the root clicked shows the run (answered in place), the thread gets "@x started run #N" from the
      // outbox; a paused workflow's one-off is said privately instead, so nobody takes it for a resume.
      if (result.kind === 'started') return result.paused ? pausedNote(escapeMrkdwn(found.workflow.name)) : undefined;
      return runNowText(result, found.workflow.name, { user: a.user, seesThread: true }).text;
    }, { answerInPlace: true }),
  );
}
