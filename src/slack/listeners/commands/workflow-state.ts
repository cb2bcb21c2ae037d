import type { Workflow } from '../../../db/schema.js';
import { startMaintenance } from '../../../services/maintenance-windows.js';
import { pauseWorkflow, resumeWorkflow, type PauseResult } from '../../../services/workflow-state.js';
import { slackDate, userMention } from '../../blocks/format.js';
import { codeSpan, escapeMrkdwn } from '../../blocks/limits.js';
import type { SchedulerCommand } from './parse-command.js';
import { refusalFor } from '../rights.js';
import type { SlackScope } from '../tenancy.js';
import type { SlackContext } from '../context.js';
import { tenantSuggestion } from './tenant-suggestions.js';
import type { AnswerAbout } from './public-answer.js';

/**
 * `/scheduler pause|resume|maintenance`. Each changes state for everyone
 * (DESIGN.md: answers are ephemeral unless they do). A pause or resume of a
 * workflow with an open alert the channel sees is told in that thread (the
 * `workflow_paused` / `workflow_resumed` event the service records), so it
 * answers the asker alone; without one, and for a maintenance window (whose
 * start no thread tells), the answer is said in the channel, naming who.
 */

type Reply = { text: string; public?: boolean; about?: AnswerAbout };
type Where = Exclude<SlackScope, { kind: 'unlinked' }>;
type Body = { user_id: string; channel_id: string };

/** The tenant's rights decide (src/domain/rights.ts); a refusal names whom to ask. */
async function refused(ctx: SlackContext, tenantId: string, action: 'pause' | 'maintenance', user: string): Promise<Reply | undefined> {
  const tenant = await ctx.deps.db.selectFrom('tenants').select(['name', 'rights']).where('id', '=', tenantId).executeTakeFirst();
  if (!tenant) return { text: 'No such tenant here.' };
  // Slash commands only come from the tenant's own channel or the platform channel (tenancy checked the scope).
  const text = await refusalFor({ action, user, tenant, channelMember: true }, ctx.deps.config, ctx.directory);
  return text ? { text } : undefined;
}

export async function pauseOrResumeCommand(
  ctx: SlackContext,
  where: Where,
  command: Extract<SchedulerCommand, { kind: 'pause' | 'resume' }>,
  workflow: Workflow,
  body: Body,
  /** The asker may not see the workflow's alert (in shadow): its thread is not theirs, so it is not mentioned. */
  hideAlert: boolean,
): Promise<Reply> {
  const { deps } = ctx;
  const refusal = await refused(ctx, workflow.tenantId, 'pause', body.user_id);
  if (refusal) return refusal;
  const input = { workflowId: workflow.id, actor: body.user_id, scope: where.scope };
  const result = command.kind === 'pause' ? await pauseWorkflow(deps, { ...input, reason: command.reason ?? null }) : await resumeWorkflow(deps, input);
  if (result.kind === 'ok' && !(result.alert && !hideAlert)) {
    return { text: `${userMention(body.user_id)} ${pauseSentence(workflow.name, command.kind, command.kind === 'pause' ? command.reason : undefined)}`, public: true, about: { tenantId: workflow.tenantId, workflowId: workflow.id } };
  }
  return { text: pauseText(result, workflow.name, command.kind) };
}

/** What a pause or resume did, after its subject ("Paused …" to the asker, "@x paused …" to the channel). */
function pauseSentence(workflowName: string, kind: 'pause' | 'resume', reason?: string): string {
  const name = `*${escapeMrkdwn(workflowName)}*`;
  return kind === 'pause'
    ? `paused ${name}${reason ? ` (${escapeMrkdwn(reason)})` : ''}: nothing fires, no new alert opens and an open one does not escalate until \`/scheduler resume ${escapeMrkdwn(workflowName)}\`.`
    : `resumed ${name}: it fires from its next tick, and its alert's escalation clock runs again.`;
}

function pauseText(result: PauseResult, workflowName: string, kind: 'pause' | 'resume'): string {
  const name = `*${escapeMrkdwn(workflowName)}*`;
  switch (result.kind) {
    case 'ok': {
      const said = pauseSentence(workflowName, kind);
      return `${said[0]!.toUpperCase()}${said.slice(1)} Its open alert's thread has been told.`;
    }
    case 'already_paused':
      return `${name} is already paused${result.workflow.pausedBy ? ` (by <@${escapeMrkdwn(result.workflow.pausedBy)}>)` : ''}.`;
    case 'not_paused':
      return `${name} is not paused.`;
    case 'paused_by_config':
      return `${name} is paused in its definition (the workflows file or the API); resume it there.`;
    case 'not_found':
      return `${name} is no longer watched.`;
  }
}

/**
 * A one-off window on a workflow, or on the whole tenant when the target is
 * `<tenant>/*` or the tenant's bare id (in the platform channel, any
 * tenant's); a bare id that is also a workflow's name is asked about, not guessed. The reply says
 * when it ends; its end is told in the thread of an open alert.
 */
export async function maintenanceCommand(
  ctx: SlackContext,
  where: Where,
  command: Extract<SchedulerCommand, { kind: 'maintenance' }>,
  body: Body,
  resolveWorkflow: (name: string) => Promise<{ workflow: Workflow } | { reply: Reply }>,
): Promise<Reply> {
  const { deps } = ctx;
  // `acme/*` is the whole tenant, always; a bare `acme` is too, unless a workflow here is also called that.
  const wholeTenant = /^(.+)\/\*$/.exec(command.target)?.[1];
  const tenantId = await tenantNamed(ctx, where, wholeTenant ?? command.target);
  if (wholeTenant !== undefined && !tenantId) return { text: `No tenant called ${codeSpan(wholeTenant, 200)} here.${await tenantSuggestion(ctx, where, wholeTenant, '/*')}` };
  const found = wholeTenant !== undefined ? undefined : await resolveWorkflow(command.target);
  let target: { tenantId: string; workflow: string | null };
  if (tenantId && found && 'workflow' in found && found.workflow.name === command.target) {
    const name = codeSpan(command.target, 200);
    return { text: `${name} is both a tenant and one of its workflows: say ${codeSpan(`${tenantId}/*`, 200)} for every workflow of the tenant, or ${codeSpan(`${found.workflow.tenantId}/${found.workflow.name}`, 200)} for ${name} alone.` };
  }
  if (tenantId) target = { tenantId, workflow: null };
  else {
    if (!found || 'reply' in found) return found?.reply ?? { text: `No workflow or tenant called ${codeSpan(command.target, 200)} here.` };
    target = { tenantId: found.workflow.tenantId, workflow: found.workflow.name };
  }
  const refusal = await refused(ctx, target.tenantId, 'maintenance', body.user_id);
  if (refusal) return refusal;
  const result = await startMaintenance(deps, { ...target, durationMs: command.durationMs, reason: command.reason, actor: body.user_id, scope: where.scope });
  if (result.kind === 'not_found') return { text: `No workflow or tenant called ${codeSpan(command.target, 200)} here.` };
  // A window set from Slack starts now, so this is never its start's fault; said plainly all the same.
  if (result.kind === 'window_limit') return { text: `No maintenance window set: ${escapeMrkdwn(result.refusal.message)}.` };
  if (result.kind === 'bad_start') return { text: `No maintenance window set: it ${escapeMrkdwn(result.problem)}.` };
  const what = target.workflow ? `*${escapeMrkdwn(target.workflow)}*` : `every workflow of *${escapeMrkdwn(target.tenantId)}*`;
  // No thread is told when a window starts: the channel hears it here, with who set it and why.
  return {
    text: `${userMention(body.user_id)} set maintenance for ${what} until ${slackDate(result.window.endsAt)} (${escapeMrkdwn(command.reason)}): failures and missed runs are recorded but open, escalate and page nothing. When it ends, an open alert's thread gets a summary.`,
    public: true,
    about: { tenantId: target.tenantId, ...(found && 'workflow' in found && target.workflow ? { workflowId: found.workflow.id } : {}) },
  };
}

async function tenantNamed(ctx: SlackContext, where: Where, name: string): Promise<string | null> {
  if (where.kind === 'tenant') return where.tenant.id === name ? name : null;
  const tenant = await ctx.deps.db.selectFrom('tenants').select('id').where('id', '=', name).where('enabled', '=', true).executeTakeFirst();
  return tenant?.id ?? null;
}
