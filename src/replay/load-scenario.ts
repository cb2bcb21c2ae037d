import type { WorkflowsFile } from '../config/workflows-file.js';
import type { Db } from '../db/connect.js';
import { nextFireAfter } from '../domain/schedule.js';
import { syncWorkflowsFile } from '../services/sync-workflows.js';
import type { Scenario } from './scenario.js';

/** What the stored launcher config says; the replay's resolver hands every workflow the scenario's launcher instead. */
export const SCENARIO_LAUNCHER = { kind: 'command', command: 'scripted by the replay scenario' } as const;

/**
 * Writes the scenario's tenants and workflows the way the workflows file is
 * synced at start-up, then points each workflow at its first tick at or
 * after `start` (the sync's "strictly after now" would skip a tick at start).
 * Returns workflow ids by tenant/name.
 */
export async function loadScenario(db: Db, scenario: Scenario): Promise<Map<string, number>> {
  const file: WorkflowsFile = {
    tenants: scenario.tenants.map((t) => ({ id: t.id, name: t.name, channel: t.channel, ...(t.shadow ? { shadow: true } : {}), ...(t.oncall ? { oncall: t.oncall } : {}) })),
    workflows: scenario.workflows.map((w) => ({
      tenant: w.tenant,
      name: w.name,
      cron: w.cron,
      timezone: w.timezone,
      mode: w.mode,
      launcher: { ...SCENARIO_LAUNCHER },
      policy: w.policy,
      ...(w.dependsOn ? { dependsOn: w.dependsOn } : {}),
      ...(w.shadow ? { shadow: true } : {}),
      monitoring: true,
      paused: false,
      enabled: true,
    })),
  };
  await syncWorkflowsFile(db, file, scenario.start, {});
  const ids = new Map<string, number>();
  for (const w of scenario.workflows) {
    const first = nextFireAfter(w.cron, w.timezone, new Date(scenario.start.getTime() - 1));
    const row = await db
      .updateTable('workflows')
      .set({ nextTickAt: first })
      .where('tenantId', '=', w.tenant)
      .where('name', '=', w.name)
      .returning('id')
      .executeTakeFirstOrThrow();
    ids.set(w.key, row.id);
  }
  return ids;
}
