import type { Deps } from '../deps.js';
import { releaseOwnership, reassign, silence, takeOwnership, unsilence, type Actor } from '../ledger/alert-actions.js';
import { findOpenAlertForWorkflow } from '../ledger/alert-queries.js';
import { requestRunNow } from '../services/run-now.js';
import { scopeForChannel } from '../slack/listeners/tenancy.js';
import { parseDuration } from '../domain/durations.js';
import type { ScenarioLauncher } from './scenario-launcher.js';
import type { ScenarioAction } from './scenario.js';

export interface ActionRecord {
  at: Date;
  user: string;
  channel: string;
  action: ScenarioAction['action'];
  /** tenant/name */
  workflow: string;
  /** What the service answered: ok, started, not_found, no_open_alert, already_owned, already_running… */
  result: string;
}

/**
 * Performs one scripted action the way the Slack listeners do: scope from
 * the channel (a tenant's channel sees that tenant, the platform channel
 * everything), the user as the actor, and the same service call.
 */
export async function performAction(deps: Deps, launcher: ScenarioLauncher, action: ScenarioAction, workflowId: number): Promise<ActionRecord> {
  const record = (result: string): ActionRecord => ({ at: action.at, user: action.user, channel: action.channel, action: action.action, workflow: action.workflow, result });
  const where = await scopeForChannel(deps.db, deps.config, action.channel);
  if (where.kind === 'unlinked') return record('unlinked_channel');
  const actor: Actor = { user: action.user, channel: action.channel };
  const scope = where.scope;

  if (action.action === 'run_now') {
    launcher.expectManualRun(workflowId, action.outcome);
    const result = await requestRunNow(deps, { workflowId, actor, scope });
    if (result.kind !== 'started') launcher.forgetManualRun(workflowId);
    return record(result.kind);
  }

  const alert = await findOpenAlertForWorkflow(deps.db, workflowId);
  if (!alert) return record('no_open_alert');
  const input = { alertId: alert.id, actor, scope };
  switch (action.action) {
    case 'take_ownership':
      return record(outcome(await takeOwnership(deps, input)));
    case 'release':
      return record(outcome(await releaseOwnership(deps, input)));
    case 'reassign':
      return record(outcome(await reassign(deps, { ...input, team: action.team, user: action.assignee ?? null, note: action.note ?? null })));
    case 'silence': {
      const until = action.duration === 'until_resolved' ? ('resolved' as const) : new Date(deps.clock.now().getTime() + parseDuration(action.duration)!);
      return record(outcome(await silence(deps, { ...input, until, reason: action.reason ?? null })));
    }
    case 'unsilence':
      return record(outcome(await unsilence(deps, input)));
  }
}

function outcome(result: { kind: string; reason?: string; by?: string }): string {
  if (result.kind === 'already_owned' && result.by) return `already_owned by ${result.by}`;
  if (result.kind === 'invalid' && result.reason) return `invalid: ${result.reason}`;
  return result.kind;
}
