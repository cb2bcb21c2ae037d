import type { App } from '@slack/bolt';
import type { Workflow } from '../../../db/schema.js';
import { silence, takeOwnership, unsilence } from '../../../services/alert-actions.js';
import { findOpenAlertForWorkflow } from '../../../services/alert-queries.js';
import { requestRunNow } from '../../../services/run-now.js';
import { slackDate } from '../../blocks/format.js';
import { helpText } from '../../blocks/help.js';
import { renderHistory } from '../../blocks/history.js';
import { escapeMrkdwn } from '../../blocks/limits.js';
import { renderStatusList, renderWorkflowStatus } from '../../blocks/status.js';
import { closestNames } from '../../commands/closest-names.js';
import { parseSchedulerCommand } from '../../commands/parse-command.js';
import { historyRows, statusRows, workflowDetail, workflowsInScope } from '../../queries.js';
import { mayReassignOrSilence, NOT_ADMIN_TEXT, scopeForChannel, UNLINKED_TEXT, type SlackScope } from '../../tenancy.js';
import { actionRefusal, runNowText } from '../answers.js';
import type { SlackContext } from '../context.js';
import { maintenanceCommand, pauseOrResumeCommand } from './workflow-state.js';
import { commandBody } from '../payloads.js';

type Reply = { text: string; public?: boolean; blocks?: never };

/** `/scheduler`: acked at once; the answer follows on the response_url. Ephemeral unless it changed state. */
export function registerSchedulerCommand(app: App, ctx: SlackContext): void {
  app.command('/scheduler', async ({ ack, body, respond }) => {
    await ack();
    const parsed = commandBody.safeParse(body);
    if (!parsed.success) {
      await respond({ response_type: 'ephemeral', text: 'Sorry, I could not read that command.' });
      return;
    }
    const reply = await runCommand(ctx, parsed.data);
    await respond({ response_type: reply.public ? 'in_channel' : 'ephemeral', text: reply.text, ...(reply.blocks ? { blocks: reply.blocks } : {}) });
  });
}

async function runCommand(ctx: SlackContext, body: { text: string; user_id: string; channel_id: string }): Promise<Reply> {
  const { deps } = ctx;
  const command = parseSchedulerCommand(body.text);
  if (command.kind === 'help') return { text: helpText() };
  if (command.kind === 'usage') return { text: command.message };
  const where = await scopeForChannel(deps.db, deps.config, body.channel_id);
  if (where.kind === 'unlinked') return { text: UNLINKED_TEXT };
  const now = deps.clock.now();
  const actor = { user: body.user_id, channel: body.channel_id };

  if (command.kind === 'maintenance') return maintenanceCommand(ctx, where, command, body, (name) => resolveWorkflow(ctx, where, name));
  if (command.kind === 'status' && !command.workflow) {
    const message = renderStatusList(await statusRows(deps.db, await workflowsInScope(deps.db, where.scope), now), where.label);
    return { text: message.text, blocks: message.blocks as never };
  }
  const found = await resolveWorkflow(ctx, where, command.workflow!);
  if ('reply' in found) return found.reply;
  const wf = found.workflow;
  const name = `*${escapeMrkdwn(wf.name)}*`;

  switch (command.kind) {
    case 'status': {
      const message = renderWorkflowStatus(await workflowDetail(deps.db, deps.launchers, wf, now));
      return { text: message.text, blocks: message.blocks as never };
    }
    case 'history': {
      const message = renderHistory(wf.name, await historyRows(deps.db, wf.id, 15));
      return { text: message.text, blocks: message.blocks as never };
    }
    case 'run': {
      const result = await requestRunNow(deps, { workflowId: wf.id, actor, scope: where.scope });
      return runNowText(result, wf.name);
    }
    case 'ack': {
      const alert = await findOpenAlertForWorkflow(deps.db, wf.id);
      if (!alert) return { text: `${name} has no open alert to acknowledge.` };
      const result = await takeOwnership(deps, { alertId: alert.id, actor, scope: where.scope });
      return actionRefusal(result) ? { text: actionRefusal(result)! } : { text: `<@${body.user_id}> acknowledged the alert on ${name} and owns it now.`, public: true };
    }
    case 'silence': {
      if (!mayReassignOrSilence(deps.config, body.user_id)) return { text: NOT_ADMIN_TEXT };
      const alert = await findOpenAlertForWorkflow(deps.db, wf.id);
      if (!alert) return { text: `${name} has no open alert to silence.` };
      const until = new Date(now.getTime() + command.durationMs);
      const result = await silence(deps, { alertId: alert.id, actor, scope: where.scope, until, reason: command.reason ?? null });
      return actionRefusal(result) ? { text: actionRefusal(result)! } : { text: `<@${body.user_id}> silenced the alert on ${name} until ${slackDate(until)}.`, public: true };
    }
    case 'pause':
    case 'resume':
      return pauseOrResumeCommand(ctx, where, command, wf, body);
    case 'unsilence': {
      if (!mayReassignOrSilence(deps.config, body.user_id)) return { text: NOT_ADMIN_TEXT };
      const alert = await findOpenAlertForWorkflow(deps.db, wf.id);
      if (!alert) return { text: `${name} has no open alert.` };
      const result = await unsilence(deps, { alertId: alert.id, actor, scope: where.scope });
      return actionRefusal(result) ? { text: actionRefusal(result)! } : { text: `<@${body.user_id}> unsilenced the alert on ${name}.`, public: true };
    }
  }
}

/**
 * A workflow by name within the scope. In the platform channel names may
 * repeat across tenants; `tenant/name` picks one.
 */
async function resolveWorkflow(ctx: SlackContext, where: Exclude<SlackScope, { kind: 'unlinked' }>, wanted: string): Promise<{ workflow: Workflow } | { reply: Reply }> {
  const all = await workflowsInScope(ctx.deps.db, where.scope);
  const qualified = (w: Workflow) => `${w.tenantId}/${w.name}`;
  const matches = all.filter((w) => w.name === wanted || qualified(w) === wanted);
  if (matches.length === 1) return { workflow: matches[0]! };
  if (matches.length > 1) return { reply: { text: `Several tenants have a workflow called \`${escapeMrkdwn(wanted)}\`: ${matches.map((w) => `\`${escapeMrkdwn(qualified(w))}\``).join(', ')}. Name one of those.` } };
  const names = where.kind === 'platform' ? all.map(qualified) : all.map((w) => w.name);
  const close = closestNames(wanted, names);
  const hint = close.length ? ` Did you mean ${close.map((c) => `\`${escapeMrkdwn(c)}\``).join(', ')}?` : ' `/scheduler status` lists them.';
  return { reply: { text: `No workflow called \`${escapeMrkdwn(wanted)}\` in ${escapeMrkdwn(where.label)}.${hint}` } };
}
