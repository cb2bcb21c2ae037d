import type { Deps } from '../deps.js';
import { releaseOwnership, reassign, silence, takeOwnership, unsilence, type Actor } from '../ledger/alert-actions.js';
import { findOpenAlertForWorkflow } from '../ledger/alert-queries.js';
import { requestRunNow } from '../services/run-now.js';
import { scopeForChannel } from '../slack/listeners/tenancy.js';
import { parseDuration } from '../domain/durations.js';
import type { ScenarioLauncher } from './scenario-launcher.js';
import { changeWorkflowPolicy } from '../services/policy-versions.js';
import { startMaintenance } from '../services/maintenance-windows.js';
import type { MaintenanceInput, PolicyChange, Scenario, ScenarioAction } from './scenario.js';

export interface ActionRecord {
  at: Date;
  user: string;
  channel: string;
  action: ScenarioAction['action'] | 'change_policy' | 'maintenance';
  /** tenant/name */
  workflow: string;
  /** What the service answered: ok, started, not_found, no_open_alert, already_owned, already_running… */
  result: string;
}

/**
 * The scenario's scripted changes, in time order: at each instant, the
 * operator's policy changes first (they were in force before anyone clicked
 * at that instant), then maintenance windows set, then what people did in Slack.
 */
export class ScriptedActions {
  readonly records: ActionRecord[] = [];
  private nextAction = 0;
  private nextChange = 0;
  private nextWindow = 0;

  constructor(
    private readonly deps: Deps,
    private readonly launcher: ScenarioLauncher,
    private readonly scenario: Pick<Scenario, 'actions' | 'policyChanges' | 'maintenance' | 'tenants' | 'workflows'>,
    private readonly workflowIdOf: (key: string) => number,
  ) {}

  /** When the next scripted change is due. */
  nextAt(): Date | undefined {
    const times = [this.scenario.policyChanges[this.nextChange]?.at, this.scenario.maintenance[this.nextWindow]?.at, this.scenario.actions[this.nextAction]?.at].filter((d): d is Date => d !== undefined);
    return times.length ? new Date(Math.min(...times.map((d) => d.getTime()))) : undefined;
  }

  /** Performs every change due by `now`; true when there was one. */
  async performDue(now: Date): Promise<boolean> {
    const { policyChanges, maintenance, actions } = this.scenario;
    let any = false;
    while (this.nextChange < policyChanges.length && policyChanges[this.nextChange]!.at.getTime() <= now.getTime()) {
      this.records.push(await this.changePolicy(policyChanges[this.nextChange++]!));
      any = true;
    }
    while (this.nextWindow < maintenance.length && maintenance[this.nextWindow]!.at.getTime() <= now.getTime()) {
      this.records.push(await this.setMaintenance(maintenance[this.nextWindow++]!));
      any = true;
    }
    while (this.nextAction < actions.length && actions[this.nextAction]!.at.getTime() <= now.getTime()) {
      const action = actions[this.nextAction++]!;
      this.records.push(await performAction(this.deps, this.launcher, action, this.workflowIdOf(action.workflow)));
      any = true;
    }
    return any;
  }

  private async changePolicy(change: PolicyChange): Promise<ActionRecord> {
    const tenant = change.workflow.slice(0, change.workflow.indexOf('/'));
    const channel = this.scenario.tenants.find((t) => t.id === tenant)?.channel ?? '';
    const version = await changeWorkflowPolicy(this.deps.db, this.workflowIdOf(change.workflow), change.policy, {
      now: this.deps.clock.now(),
      config: this.deps.config,
      changedBy: 'replay (a policy change in the ledger)',
    });
    return { at: change.at, user: 'operator', channel, action: 'change_policy', workflow: change.workflow, result: `version ${version ?? 'unchanged'}: ${JSON.stringify(change.policy)}` };
  }

  /** A window set then, through the service the API and Slack use, in the tenant's scope. */
  private async setMaintenance(m: MaintenanceInput): Promise<ActionRecord> {
    const channel = this.scenario.tenants.find((t) => t.id === m.tenant)?.channel ?? '';
    const workflow = m.workflow === undefined ? undefined : m.workflow.slice(m.workflow.indexOf('/') + 1);
    const result = await startMaintenance(this.deps, {
      tenantId: m.tenant,
      workflow: workflow ?? null,
      startsAt: m.startsAt,
      durationMs: m.endsAt.getTime() - m.startsAt.getTime(),
      reason: m.reason ?? null,
      actor: 'replay (a maintenance window in the ledger)',
      scope: { tenantId: m.tenant },
    });
    const span = `${m.startsAt.toISOString()} → ${m.endsAt.toISOString()}`;
    return { at: m.at, user: 'operator', channel, action: 'maintenance', workflow: `${m.tenant}/${workflow ?? '*'}`, result: result.kind === 'ok' ? `window ${span}` : result.kind };
  }
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
