import type { Tenant, Workflow } from '../../../db/schema.js';
import { silenceAction, type SlackAction } from '../../../domain/rights.js';
import { reassign, releaseOwnership, resolveByHand, silence, takeOwnership, unsilence } from '../../../ledger/alert-actions.js';
import { findOpenAlertForWorkflow, type Scope } from '../../../ledger/alert-queries.js';
import { slackDate, userMention } from '../../blocks/format.js';
import { escapeMrkdwn } from '../../blocks/limits.js';
import { actionRefusal } from '../answers.js';
import type { SlackContext } from '../context.js';
import { assigneeRefusal, refusalFor } from '../rights.js';
import type { SchedulerCommand } from './parse-command.js';

interface AlertCommandInput {
  command: SchedulerCommand;
  workflow: Workflow;
  tenant: Tenant;
  scope: Scope;
  actor: { user: string; channel: string };
  now: Date;
  /** The asker may not see the workflow's alert (in shadow): as far as they are told, it has none. */
  hideAlert: boolean;
}

/**
 * `/scheduler ack|release|reassign|silence|unsilence|resolve <workflow>`: on
 * the workflow's open alert, if the tenant's rights allow. State changes
 * answer the caller privately; the channel hears of them only in the alert's
 * thread (through the outbox). Undefined for a command that is not one of these.
 */
export async function alertCommand(ctx: SlackContext, input: AlertCommandInput): Promise<{ text: string } | undefined> {
  const { deps } = ctx;
  const { command, workflow: wf, tenant, scope: where, actor, now } = input;
  const name = `*${escapeMrkdwn(wf.name)}*`;
  const refusal = (action: SlackAction) => refusalFor({ action, user: actor.user, tenant, channelMember: true }, deps.config, ctx.directory);
  const openAlert = async () => (input.hideAlert ? undefined : findOpenAlertForWorkflow(deps.db, wf.id));

  switch (command.kind) {
    case 'ack': {
      const refused = await refusal('take');
      if (refused) return { text: refused };
      const alert = await openAlert();
      if (!alert) return { text: `${name} has no open alert to acknowledge.` };
      const result = await takeOwnership(deps, { alertId: alert.id, actor, scope: where });
      if (result.kind === 'ok' && result.confirmed) return { text: `You still own the alert on ${name}: its reminders start over. The thread says so.` };
      return { text: actionRefusal(result) ?? `You own the alert on ${name} now; escalation stopped. The thread says so.` };
    }
    case 'release': {
      const refused = await refusal('release_own');
      if (refused) return { text: refused };
      const alert = await openAlert();
      if (!alert) return { text: `${name} has no open alert.` };
      const othersRefusal = await refusal('release_other');
      const result = await releaseOwnership(deps, { alertId: alert.id, actor, scope: where, mayReleaseOthers: !othersRefusal });
      if (result.kind === 'owned_by_other') return { text: othersRefusal! };
      return { text: actionRefusal(result) ?? `The alert on ${name} is unowned again; it escalates on its own if it keeps failing.` };
    }
    case 'reassign': {
      const refused = await refusal('reassign');
      if (refused) return { text: refused };
      const alert = await openAlert();
      if (!alert) return { text: `${name} has no open alert to reassign.` };
      const unfit = await assigneeRefusal({ assignee: command.user, tenant }, deps.config, ctx.directory);
      if (unfit) return { text: unfit };
      const result = await reassign(deps, { alertId: alert.id, actor, scope: where, team: alert.ownerTeam, user: command.user, note: command.note ?? null });
      return { text: actionRefusal(result) ?? `The alert on ${name} is ${userMention(command.user)}'s now.` };
    }
    case 'silence': {
      const refused = await refusal(silenceAction(command.durationMs));
      if (refused) return { text: refused };
      const alert = await openAlert();
      if (!alert) return { text: `${name} has no open alert to silence.` };
      const until = command.durationMs === null ? ('resolved' as const) : new Date(now.getTime() + command.durationMs);
      const result = await silence(deps, { alertId: alert.id, actor, scope: where, until, reason: command.reason ?? null });
      return { text: actionRefusal(result) ?? `Silenced the alert on ${name} ${until === 'resolved' ? 'until it resolves' : `until ${slackDate(until)}`}.` };
    }
    case 'unsilence': {
      const refused = await refusal('unsilence');
      if (refused) return { text: refused };
      const alert = await openAlert();
      if (!alert) return { text: `${name} has no open alert.` };
      const result = await unsilence(deps, { alertId: alert.id, actor, scope: where });
      return { text: actionRefusal(result) ?? `Unsilenced the alert on ${name}.` };
    }
    case 'resolve': {
      const refused = await refusal('resolve');
      if (refused) return { text: refused };
      const alert = await openAlert();
      if (!alert) return { text: `${name} has no open alert to resolve.` };
      const result = await resolveByHand(deps, { alertId: alert.id, actor, scope: where, note: command.note });
      return { text: actionRefusal(result) ?? `Resolved the alert on ${name}; its failures are counted again from now, and a new alert opens when they reach its threshold.` };
    }
    default:
      return undefined;
  }
}
