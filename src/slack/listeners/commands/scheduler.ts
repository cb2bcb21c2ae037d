import type { App } from '@slack/bolt';
import type { Workflow } from '../../../db/schema.js';
import type { SlackAction } from '../../../domain/rights.js';
import { plural } from '../../../domain/durations.js';
import { listOpenAlerts, type OpenAlertRow } from '../../../ledger/alert-queries.js';
import { requestRunNow } from '../../../services/run-now.js';
import { slackDate } from '../../blocks/format.js';
import { onCallText } from './oncall.js';
import { helpText } from '../../blocks/help.js';
import { renderHistory } from '../../blocks/history.js';
import { codeSpan, escapeMrkdwn } from '../../blocks/limits.js';
import { renderStatusList, renderWorkflowStatus } from '../../blocks/status.js';
import { activeStorms } from '../../views/storm-queries.js';
import { closestNames } from './closest-names.js';
import { parseSchedulerCommand } from './parse-command.js';
import { historyRows, shadowWorkflowIds, statusRows, workflowDetail, workflowsInScope } from '../../views/queries.js';
import { inShadow } from '../../../domain/shadow.js';
import { refusalFor } from '../rights.js';
import { scopeForChannel, seesShadowHere, UNLINKED_TEXT, type SlackScope } from '../tenancy.js';
import { failureAnswer, runNowText } from '../answers.js';
import { alertCommand } from './alert-commands.js';
import type { SlackContext } from '../context.js';
import { maintenanceCommand, pauseOrResumeCommand } from './workflow-state.js';
import { digestCommand } from './digest.js';
import { commandBody } from '../payloads.js';
import { sayPublicAnswer, type AnswerAbout } from './public-answer.js';

type Reply = { text: string; public?: boolean; blocks?: never; about?: AnswerAbout };

/** `/scheduler`: acked at once; the answer follows on the response_url. Ephemeral unless it changed state. */
export function registerSchedulerCommand(app: App, ctx: SlackContext): void {
  app.command('/scheduler', async ({ ack, body, respond, client }) => {
    await ack();
    const parsed = commandBody.safeParse(body);
    if (!parsed.success) {
      await respond({ response_type: 'ephemeral', text: 'Sorry, I could not read that command.' });
      return;
    }
    let reply: Reply;
    try {
      reply = await runCommand(ctx, parsed.data);
    } catch (error) {
      reply = { text: failureAnswer(ctx.deps.logger.child({ command: '/scheduler' }), error, 'command') };
    }
    if (reply.public) return void (await sayPublicAnswer(ctx, { client, respond, typedIn: parsed.data.channel_id }, reply.text, reply.about));
    await respond({ response_type: 'ephemeral', text: reply.text, ...(reply.blocks ? { blocks: reply.blocks } : {}) });
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
  // Alerts in shadow are told only to the audit destination: a tenant's people asking here are not shown them.
  const seesShadow = await seesShadowHere(where, body.user_id, deps.config, ctx.directory);
  const hidden = async () => (seesShadow || where.kind === 'platform' ? new Set<number>() : await shadowWorkflowIds(deps.db, [where.tenant.id]));

  if (command.kind === 'maintenance') return maintenanceCommand(ctx, where, command, body, (name) => resolveWorkflow(ctx, where, name));
  if (command.kind === 'status' && !command.workflow) {
    const storms = await activeStorms(deps.db, where.scope.tenantId ? [where.scope.tenantId] : undefined, { countShadow: seesShadow });
    const message = renderStatusList(await statusRows(deps.db, await workflowsInScope(deps.db, where.scope), now, where.scope.tenantId, await hidden()), where.label, storms);
    return { text: message.text, blocks: message.blocks as never };
  }
  if (command.kind === 'mine') {
    const hide = await hidden();
    return { text: mineText((await listOpenAlerts(deps.db, where.scope)).filter((o) => !hide.has(o.workflow.id)), body.user_id, where.kind === 'platform') };
  }
  if (command.kind === 'oncall') return { text: await onCallText(ctx, where) };
  if (command.kind === 'digest') return digestCommand(ctx, where, command.tenant, now);
  const found = await resolveWorkflow(ctx, where, (command as { workflow: string }).workflow);
  if ('reply' in found) return found.reply;
  const wf = found.workflow;
  const tenant = where.kind === 'tenant' ? where.tenant : await deps.db.selectFrom('tenants').selectAll().where('id', '=', wf.tenantId).executeTakeFirstOrThrow();
  const refusal = (action: SlackAction) => refusalFor({ action, user: body.user_id, tenant, channelMember: true }, deps.config, ctx.directory);
  const hideAlert = !seesShadow && inShadow({ workflowShadow: wf.shadow, tenantShadow: tenant.shadow });

  switch (command.kind) {
    case 'status': {
      const message = renderWorkflowStatus(await workflowDetail(deps.db, deps.launchers, wf, now, hideAlert));
      return { text: message.text, blocks: message.blocks as never };
    }
    case 'history': {
      const message = renderHistory(wf.name, await historyRows(deps.db, wf.id, 15));
      return { text: message.text, blocks: message.blocks as never };
    }
    case 'run': {
      const refused = await refusal('run_now');
      if (refused) return { text: refused };
      const result = await requestRunNow(deps, { workflowId: wf.id, actor, scope: where.scope });
      return { ...runNowText(result, wf.name, { user: body.user_id, seesThread: !hideAlert }), about: { tenantId: wf.tenantId, workflowId: wf.id } };
    }
    case 'pause':
    case 'resume':
      return pauseOrResumeCommand(ctx, where, command, wf, body, hideAlert);
    default:
      return (await alertCommand(ctx, { command, workflow: wf, tenant, scope: where.scope, actor, now, hideAlert })) ?? { text: helpText() };
  }
}

function mineText(open: OpenAlertRow[], user: string, qualify: boolean): string {
  const mine = open.filter((o) => o.alert.ownerUser === user);
  if (mine.length === 0) return 'You own no open alerts here.';
  const lines = mine.map(({ alert, workflow }) => `• ${alert.severity === 'critical' ? ':rotating_light:' : ':warning:'} *${escapeMrkdwn(qualify ? `${workflow.tenantId}/${workflow.name}` : workflow.name)}*: ${alert.severity}, ${alert.consecutiveFailures > 0 ? `${plural(alert.consecutiveFailures, 'consecutive failure')}, ` : ''}open since ${slackDate(alert.openedAt)}`);
  return [`You own ${mine.length} open alert${mine.length === 1 ? '' : 's'}:`, ...lines].join('\n');
}

/**
 * A workflow by name within the scope, exactly or else in any case. In the
 * platform channel names may repeat across tenants; `tenant/name` picks one.
 */
async function resolveWorkflow(ctx: SlackContext, where: Exclude<SlackScope, { kind: 'unlinked' }>, wanted: string): Promise<{ workflow: Workflow } | { reply: Reply }> {
  const all = await workflowsInScope(ctx.deps.db, where.scope);
  const qualified = (w: Workflow) => `${w.tenantId}/${w.name}`;
  const exact = all.filter((w) => w.name === wanted || qualified(w) === wanted);
  // `Nightly-ETL` for `nightly-etl`: a name typed in another case is that workflow when no other name reads the same.
  const folded = wanted.toLowerCase();
  const matches = exact.length ? exact : all.filter((w) => w.name.toLowerCase() === folded || qualified(w).toLowerCase() === folded);
  if (matches.length === 1) return { workflow: matches[0]! };
  if (matches.length > 1) return { reply: { text: `Several tenants have a workflow called ${codeSpan(wanted, 200)}: ${matches.map((w) => codeSpan(qualified(w), 200)).join(', ')}. Name one of those.` } };
  const names = where.kind === 'platform' ? all.map(qualified) : all.map((w) => w.name);
  const close = closestNames(wanted, names);
  const hint = close.length ? ` Did you mean ${close.map((c) => codeSpan(c, 200)).join(', ')}?` : ' `/scheduler status` lists them.';
  const within = where.kind === 'platform' ? 'any tenant' : escapeMrkdwn(where.label);
  return { reply: { text: `No workflow called ${codeSpan(wanted, 200)} in ${within}.${hint}` } };
}
