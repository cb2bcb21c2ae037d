import { checkScenario, type Scenario, type ScenarioInput } from './scenario.js';

export interface SyntheticOptions {
  workflows?: number;
  hours?: number;
  cron?: string;
  tenants?: number;
  start?: string;
  /** More outcome rules, after the built-in incidents. */
  outcomes?: ScenarioInput['outcomes'];
}

/**
 * A scenario of many identical workflows for measuring replay speed (issue 6:
 * 40 workflows at five-minute cadence for 24 hours is 11,520 ticks). Mostly
 * quiet, as real nights are, with one incident per tenant so alerts, threads
 * and the outbox are exercised too.
 */
export function syntheticScenario(options: SyntheticOptions = {}): Scenario {
  const { workflows = 40, hours = 24, cron = '*/5 * * * *', tenants = 4, start = '2026-03-10T00:00:00Z', outcomes = [] } = options;
  const startMs = new Date(start).getTime();
  const iso = (hoursIn: number) => new Date(startMs + hoursIn * 3_600_000).toISOString();
  const tenantList = Array.from({ length: tenants }, (_, i) => ({ id: `tenant-${i + 1}`, name: `Tenant ${i + 1}`, channel: `CTENANT${i + 1}` }));
  const input: ScenarioInput = {
    description: `${workflows} workflows at "${cron}" for ${hours} hours`,
    start,
    until: iso(hours),
    platformChannel: 'CPLATFORM',
    tenants: tenantList,
    workflows: Array.from({ length: workflows }, (_, i) => ({ tenant: tenantList[i % tenants]!.id, name: `job-${String(i + 1).padStart(3, '0')}`, cron })),
    // Workflow i of each tenant's first job fails for an hour, a few hours apart.
    outcomes: [
      ...tenantList.map((t, i) => ({
      workflow: `${t.id}/job-${String(i + 1).padStart(3, '0')}`,
      from: iso(((i * 5) % Math.max(1, hours - 1)) + 0.5),
      to: iso(((i * 5) % Math.max(1, hours - 1)) + 1.5),
        attempts: [{ status: 'failed' as const, error: `upstream timeout after 30000 ms (request ${i})`, stage: 'fetch' }],
      })),
      ...outcomes,
    ],
  };
  return checkScenario(input, 'synthetic scenario');
}
