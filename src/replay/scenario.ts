import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { cronSchema, dependencyRef, describeIssues, policySchema, tenantSchema, timeZoneSchema } from '../config/workflows-file.js';
import { dependencyProblems } from '../domain/dependencies.js';
import { parseDuration } from '../domain/durations.js';

/**
 * A replay scenario (issue 6): a window of virtual time, the tenants and
 * workflows in it, what each attempt of each tick does, and what people do
 * in Slack. Validated with zod; every problem names its JSON path (and line).
 */

const instant = z.iso.datetime({ offset: true, error: 'an ISO 8601 time with a zone, such as "2026-03-10T02:00:00Z"' }).transform((s) => new Date(s));
const slackUser = z.string().regex(/^[UW][A-Z0-9_]{1,40}$/, 'a Slack user id such as U0123ABCD');
const slackChannel = z.string().regex(/^[CG][A-Z0-9_]{2,}$/, 'a Slack channel id such as C0123ABCD');
const workflowRef = z.string().min(1, 'a workflow name, or tenant/name when two tenants share the name');
const durationSeconds = z.number().int().min(0).max(7 * 86_400);

/** An attempt's own duration overrides its rule's (issue 16: one slow night among ordinary ones). */
const succeeded = z.object({ status: z.literal('succeeded'), rows: z.number().int().min(0).optional(), durationSeconds: durationSeconds.optional() }).strict();
const failed = z
  .object({
    status: z.literal('failed'),
    error: z.string().min(1).optional(),
    stage: z.string().min(1).optional(),
    rows: z.number().int().min(0).optional(),
    durationSeconds: durationSeconds.optional(),
  })
  .strict();
const missing = z.object({ status: z.literal('missing') }).strict();
/** Starts and is never heard from again: only its timeout ends it (a hung job). */
const hangs = z.object({ status: z.literal('hangs') }).strict();

export const attemptSchema = z.discriminatedUnion('status', [succeeded, failed, missing, hangs]);

export const outcomeRuleSchema = z
  .object({
    workflow: workflowRef,
    /** Inclusive; absent means from the scenario's start. */
    from: instant.optional(),
    /** Inclusive; absent means to the scenario's end. */
    to: instant.optional(),
    durationSeconds: durationSeconds.default(60),
    attempts: z.array(attemptSchema).min(1, 'at least one attempt'),
  })
  .strict();

const manualOutcome = z
  .discriminatedUnion('status', [succeeded, failed])
  .default({ status: 'succeeded' });

const silenceDuration = z.string().superRefine((v, ctx) => {
  if (v !== 'until_resolved' && parseDuration(v) === undefined) {
    ctx.addIssue({ code: 'custom', message: 'a duration such as "30m", "4h", "1d" or "1h30m", or "until_resolved"' });
  }
});

const actionBase = { at: instant, user: slackUser, channel: slackChannel, workflow: workflowRef };
export const actionSchema = z.discriminatedUnion('action', [
  z.object({ ...actionBase, action: z.literal('take_ownership') }).strict(),
  z.object({ ...actionBase, action: z.literal('release') }).strict(),
  z
    .object({
      ...actionBase,
      action: z.literal('reassign'),
      team: z.enum(['engineering', 'customer']),
      assignee: slackUser.optional(),
      note: z.string().max(2000).optional(),
    })
    .strict(),
  z.object({ ...actionBase, action: z.literal('silence'), duration: silenceDuration, reason: z.string().max(500).optional() }).strict(),
  z.object({ ...actionBase, action: z.literal('unsilence') }).strict(),
  z.object({ ...actionBase, action: z.literal('run_now'), outcome: manualOutcome }).strict(),
]);

/** A one-off maintenance window set at `at` (from Slack or the API), for one workflow or (no `workflow`) its whole tenant. */
export const maintenanceWindowSchema = z
  .object({ at: instant, tenant: z.string().min(1), workflow: workflowRef.optional(), startsAt: instant, endsAt: instant, reason: z.string().max(500).optional() })
  .strict();

/** The operator changed a workflow's overrides then (over the API or the file): the replay changes them at that instant. */
export const policyChangeSchema = z.object({ at: instant, workflow: workflowRef, policy: policySchema }).strict();

/** `shadow` as in the workflows file: evaluated and recorded, told only to the platform channel; `oncall`: who a page mentions. */
const scenarioTenant = tenantSchema.pick({ id: true, name: true, shadow: true, oncall: true }).extend({ channel: slackChannel }).strict();

const scenarioWorkflow = z
  .object({
    tenant: z.string().min(1),
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'use letters, digits, dot, dash or underscore (at most 100), starting with a letter or digit'),
    cron: cronSchema,
    timezone: timeZoneSchema.default('UTC'),
    policy: policySchema.default({}),
    /**
     * managed: the bot's tick scheduler fires every tick. observed: an outside
     * scheduler does (the replay plays it), so a tick can go missing. Default:
     * observed when an outcome rule can make a tick's first attempt `missing`
     * (a managed tick cannot go unstarted: the bot fires it itself), else managed.
     */
    mode: z.enum(['managed', 'observed']).optional(),
    /** The workflows it depends on, as in the workflows file: a name of the same tenant, or tenant/name. */
    dependsOn: z.array(dependencyRef).max(50).optional(),
    shadow: z.boolean().optional(),
  })
  .strict();

export const scenarioSchema = z
  .object({
    $schema: z.string().optional(),
    description: z.string().optional(),
    start: instant,
    until: instant,
    platformChannel: slackChannel.optional(),
    tenants: z.array(scenarioTenant).min(1, 'at least one tenant'),
    workflows: z.array(scenarioWorkflow).min(1, 'at least one workflow'),
    outcomes: z.array(outcomeRuleSchema).default([]),
    actions: z.array(actionSchema).default([]),
    policyChanges: z.array(policyChangeSchema).default([]),
    maintenance: z.array(maintenanceWindowSchema).default([]),
  })
  .strict()
  // zod goes on to refinements after a field has failed its own check, so this
  // reads every value defensively and reports every cross-field problem at once.
  .superRefine((s, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
    const ms = (d: unknown) => (d instanceof Date ? d.getTime() : undefined);
    const start = ms(s.start);
    const until = ms(s.until);
    if (start !== undefined && until !== undefined) {
      if (until <= start) issue(['until'], 'must be after start');
      else if (until - start > 31 * 86_400_000) issue(['until'], 'a replay covers at most 31 days');
    }

    const tenants = new Set<string>();
    const channels = new Map<string, string>();
    s.tenants.forEach((t, i) => {
      if (tenants.has(t.id)) issue(['tenants', i, 'id'], 'duplicate tenant id');
      tenants.add(t.id);
      const other = channels.get(t.channel);
      if (other) issue(['tenants', i, 'channel'], `channel already belongs to tenant "${other}"`);
      else if (t.channel === s.platformChannel) issue(['tenants', i, 'channel'], 'is the platform channel');
      channels.set(t.channel, t.id);
    });

    const keys = new Set<string>();
    s.workflows.forEach((w, i) => {
      if (!tenants.has(w.tenant)) issue(['workflows', i, 'tenant'], 'unknown tenant');
      const key = `${w.tenant}/${w.name}`;
      if (keys.has(key)) issue(['workflows', i, 'name'], `duplicate workflow name in tenant "${w.tenant}"`);
      keys.add(key);
    });
    const refs = (list: unknown) => (Array.isArray(list) ? list.map((r) => (dependencyRef.safeParse(r).success ? (r as string) : '')) : []);
    for (const p of dependencyProblems(s.workflows.map((w) => ({ tenant: w.tenant, name: w.name, dependsOn: refs(w.dependsOn) })))) {
      issue(['workflows', p.node, 'dependsOn', p.dep], p.message);
    }

    s.outcomes.forEach((o, i) => {
      const found = resolveWorkflow(s.workflows, o.workflow);
      if (typeof found === 'string') issue(['outcomes', i, 'workflow'], found);
      const from = ms(o.from);
      const to = ms(o.to);
      if (from !== undefined && to !== undefined && to < from) issue(['outcomes', i, 'to'], 'must not be before from');
      if (typeof found !== 'string' && found.mode === 'managed' && o.attempts?.[0]?.status === 'missing') {
        issue(['outcomes', i, 'attempts', 0, 'status'], 'a managed workflow fires its own ticks, so its first attempt cannot be missing; leave out "mode" (or say "observed")');
      }
    });

    const within = (list: 'actions' | 'policyChanges' | 'maintenance', i: number, at: number | undefined) => {
      if (at !== undefined && start !== undefined && until !== undefined && (at < start || at > until)) issue([list, i, 'at'], 'must be between start and until');
    };
    s.policyChanges.forEach((c, i) => {
      within('policyChanges', i, ms(c.at));
      const found = resolveWorkflow(s.workflows, c.workflow);
      if (typeof found === 'string') issue(['policyChanges', i, 'workflow'], found);
    });
    s.maintenance.forEach((m, i) => {
      within('maintenance', i, ms(m.at));
      if (!tenants.has(m.tenant)) issue(['maintenance', i, 'tenant'], 'unknown tenant');
      const found = m.workflow === undefined ? undefined : resolveWorkflow(s.workflows.filter((w) => w.tenant === m.tenant), m.workflow);
      if (typeof found === 'string') issue(['maintenance', i, 'workflow'], `${found} in tenant "${m.tenant}"`);
      if ((ms(m.endsAt) ?? 0) <= (ms(m.startsAt) ?? 0)) issue(['maintenance', i, 'endsAt'], 'must be after startsAt');
    });
    s.actions.forEach((a, i) => {
      within('actions', i, ms(a.at));
      const tenantOfChannel = channels.get(a.channel);
      if (!tenantOfChannel && a.channel !== s.platformChannel) {
        issue(['actions', i, 'channel'], 'neither a tenant channel nor the platformChannel');
        return;
      }
      const visible = tenantOfChannel ? s.workflows.filter((w) => w.tenant === tenantOfChannel) : s.workflows;
      const found = resolveWorkflow(visible, a.workflow);
      if (typeof found === 'string') issue(['actions', i, 'workflow'], tenantOfChannel ? `${found} among tenant "${tenantOfChannel}"'s workflows (the channel's scope)` : found);
      if (a.action === 'reassign' && a.team === 'customer' && !a.note?.trim()) issue(['actions', i, 'note'], 'a note is required when handing an alert to the customer');
    });
  });

export type ScenarioInput = z.input<typeof scenarioSchema>;
type Parsed = z.output<typeof scenarioSchema>;
export type Attempt = z.output<typeof attemptSchema>;
export type OutcomeRule = z.output<typeof outcomeRuleSchema>;
export type ScenarioAction = z.output<typeof actionSchema>;
export type PolicyChange = z.output<typeof policyChangeSchema>;
export type MaintenanceInput = z.output<typeof maintenanceWindowSchema>;
export type ManualOutcome = Extract<ScenarioAction, { action: 'run_now' }>['outcome'];

export interface ScenarioWorkflow extends Omit<Parsed['workflows'][number], 'mode'> {
  /** tenant/name: unique within a scenario. */
  key: string;
  mode: 'managed' | 'observed';
}

export interface Scenario extends Omit<Parsed, 'workflows' | 'outcomes'> {
  workflows: ScenarioWorkflow[];
  /** Rules with `workflow` resolved to the workflow's key, in file order. */
  outcomes: OutcomeRule[];
  /** With `workflow` resolved to the workflow's key, in time order. */
  policyChanges: PolicyChange[];
}

/** A workflow by name, or tenant/name; a message when none or several match. */
function resolveWorkflow<W extends { tenant: string; name: string }>(workflows: W[], ref: string): W | string {
  const slash = ref.indexOf('/');
  const matches = slash >= 0 ? workflows.filter((w) => `${w.tenant}/${w.name}` === ref) : workflows.filter((w) => w.name === ref);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) return `no workflow "${ref}"`;
  return `"${ref}" names ${matches.length} workflows; write tenant/name (${matches.map((w) => `${w.tenant}/${w.name}`).join(', ')})`;
}

export class ScenarioError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source} is not a valid scenario:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ScenarioError';
  }
}

/** Parses and checks a scenario; a ScenarioError lists every problem as `source:line: path: message (got value)`. */
export function parseScenario(text: string, source = 'scenario'): Scenario {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ScenarioError(source, [`${source}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`]);
  }
  return checkScenario(raw, source, text);
}

export function checkScenario(raw: unknown, source = 'scenario', text?: string): Scenario {
  const parsed = scenarioSchema.safeParse(raw);
  if (!parsed.success) throw new ScenarioError(source, describeIssues(source, text, raw, parsed.error.issues));
  return normalise(parsed.data);
}

export async function readScenario(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ScenarioError(path, [`${path}: cannot read: ${error instanceof Error ? error.message : String(error)}`]);
  }
  return parseScenario(text, path);
}

function normalise(s: Parsed): Scenario {
  const keyOf = (ref: string, among: { tenant: string; name: string }[] = s.workflows) => {
    const w = resolveWorkflow(among, ref);
    if (typeof w === 'string') throw new Error(`unreachable: ${w}`);
    return `${w.tenant}/${w.name}`;
  };
  const outcomes = s.outcomes.map((o) => ({ ...o, workflow: keyOf(o.workflow) }));
  const channelTenant = new Map(s.tenants.map((t) => [t.channel, t.id]));
  const actions = s.actions
    .map((a) => {
      const tenant = channelTenant.get(a.channel);
      return { ...a, workflow: keyOf(a.workflow, tenant ? s.workflows.filter((w) => w.tenant === tenant) : s.workflows) };
    })
    // Stable: actions at one instant keep their file order.
    .sort((a, b) => a.at.getTime() - b.at.getTime());
  const policyChanges = s.policyChanges.map((c) => ({ ...c, workflow: keyOf(c.workflow) })).sort((a, b) => a.at.getTime() - b.at.getTime());
  const maintenance = [...s.maintenance].sort((a, b) => a.at.getTime() - b.at.getTime());
  const workflows = s.workflows.map((w) => {
    const key = `${w.tenant}/${w.name}`;
    const canMiss = outcomes.some((o) => o.workflow === key && o.attempts[0]!.status === 'missing');
    return { ...w, key, mode: w.mode ?? (canMiss ? ('observed' as const) : ('managed' as const)) };
  });
  return { ...s, workflows, outcomes, actions, policyChanges, maintenance };
}
