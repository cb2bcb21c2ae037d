import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { allowListProblem } from '../domain/address-policy.js';
import { MAX_ALERT_AFTER } from '../domain/cadence.js';
import { parseDuration } from '../domain/durations.js';
import { OVERLAP_POLICIES } from '../domain/overlap.js';
import { COMPLETE_BY_TIME } from '../domain/run-duration.js';
import { configuredHeaders, destinationListSchema, slackChannelId } from './destination-schema.js';
import { crossFileIssues } from './file-checks.js';
import { alsoBesideShapeProblems, describeIssues, jsonSyntaxProblem } from './issue-lines.js';
import { duplicateJsonKeys } from './json-locate.js';
import { cronSchema, maintenanceSchema, timeZoneSchema } from './schedule-schema.js';
import { envVarName, launcherSecret, unresolvedSecretIssues, type SecretEnv } from './secret-refs.js';
import { PING_KEY_MIN_LENGTH } from '../domain/ping-keys.js';

// The destination and schedule fields live in their own files; importers keep one entry point.
export { DESTINATION_KINDS, destinationId, destinationListSchema, destinationSchema, resolvedDestinationSchema, type DestinationInput, type DestinationSpec } from './destination-schema.js';
export { describeIssues } from './issue-lines.js';
export { cronSchema, maintenanceSchema, recurringMaintenanceOf, timeZoneSchema, type MaintenanceSpec } from './schedule-schema.js';

/** A chosen ping key must be as hard to guess as a generated one (16 random bytes, 22 base64url characters). */
export { PING_KEY_MIN_LENGTH };

/** Headers an http launcher sends: enough for any real target; every value may be a secret the redactor holds. */
const MAX_LAUNCHER_HEADERS = 32;

const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'use letters, digits, dot, dash or underscore (at most 100), starting with a letter or digit');

export const policySchema = z
  .object({
    retries: z.number().int().min(0).max(10).optional(),
    alertAfter: z.number().int().min(1).max(MAX_ALERT_AFTER).optional(),
    firstSeverity: z.enum(['warning', 'critical']).optional(),
    escalationMultiplier: z.number().positive().max(1000).optional(),
    recoverAfter: z.number().int().min(1).max(100).optional(),
    graceSeconds: z.number().int().min(0).max(7 * 86_400).optional(),
    timeoutSeconds: z.number().int().min(1).max(7 * 86_400).optional(),
    minRows: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    /** An owned alert still failing this long after it was owned (or last reminded) reminds its owner; default from the cadence. */
    remindAfterSeconds: z.number().int().min(60).max(30 * 86_400).optional(),
    /** An owner who leaves this many reminders unanswered loses the alert (escalation resumes); 0: never; default 3. */
    ownershipLapsesAfterReminders: z.number().int().min(0).max(100).optional(),
    /** A success faster than this counts as a failure, "too fast" (issue 16). */
    minDurationSeconds: z.number().int().min(1).max(7 * 86_400).optional(),
    /** A fixed "running long" threshold instead of the one learned from the workflow's successes. */
    runningLongAfterSeconds: z.number().int().min(60).max(7 * 86_400).optional(),
    /** The tick's run must have succeeded by this local time ("HH:MM", in timeZone or the workflow's zone). */
    completeBy: z
      .object({
        time: z.string().regex(COMPLETE_BY_TIME, 'a local time "HH:MM", such as "06:00"'),
        timeZone: timeZoneSchema.optional(),
      })
      .strict()
      .optional(),
    /** A managed tick falling due while a run of the workflow still runs: fired beside it (`allow`) or skipped (`skip`). */
    overlap: z.enum(OVERLAP_POLICIES).optional(),
    /** How late a managed tick may still start after its time (Kubernetes' startingDeadlineSeconds); older ticks are missed. */
    catchUpSeconds: z.number().int().min(60).max(7 * 86_400).optional(),
  })
  .strict();

export const launcherSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('command'),
      command: z.string().min(1),
      cwd: z.string().min(1).optional(),
      env: z.record(z.string(), z.string()).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('http'),
      url: z.url({ protocol: /^https?$/ }),
      mode: z.enum(['sync', 'callback']).default('sync'),
      headers: z
        .record(z.string().min(1).max(256), z.string().max(8192))
        .refine((h) => Object.keys(h).length <= MAX_LAUNCHER_HEADERS, `at most ${MAX_LAUNCHER_HEADERS} headers`)
        .pipe(configuredHeaders('launcher'))
        .optional(),
      /** Overrides LAUNCHER_SECRET for this target. */
      secret: launcherSecret.optional(),
      /** Name of an environment variable holding `secret` (one or the other, not both). */
      secretEnv: envVarName.optional(),
    })
    .strict()
    .superRefine((l, ctx) => {
      if (l.secret !== undefined && l.secretEnv !== undefined) ctx.addIssue({ code: 'custom', path: ['secretEnv'], message: 'give "secret" or "secretEnv", not both' });
    }, alsoBesideShapeProblems),
], { error: (issue) => (issue.code === 'invalid_union' ? 'kind must be "command" or "http"' : undefined) });

const slackUserId = z.string().regex(/^[UW][A-Z0-9]{2,}$/, 'a Slack user id such as U0123ABCD');
const slackUserGroupId = z.string().regex(/^S[A-Z0-9]{2,}$/, 'a Slack user group id such as S0123ABCD');
const slackUserOrGroupId = z.string().regex(/^[UWS][A-Z0-9]{2,}$/, 'a Slack user id (U0123ABCD) or user group id (S0123ABCD)');

/** Who may act on the tenant's alerts in Slack (src/domain/rights.ts; docs/slack.md "Rights"). */
export const rightsSchema = z
  .object({
    responders: z.array(slackUserOrGroupId).max(200).optional(),
    admins: z.array(slackUserOrGroupId).max(200).optional(),
  })
  .strict();

/** Who an unowned escalation to critical pages: a user group and/or users. */
export const onCallSchema = z
  .object({
    group: slackUserGroupId.optional(),
    users: z.array(slackUserId).max(50).optional(),
  })
  .strict();

/** A duration as "8h", "1d", "90m", or a number of seconds. */
export const durationSecondsSchema = z.union([
  z.number().int().min(60).max(365 * 86_400),
  z.string().transform((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined || ms < 60_000) {
      ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration of at least a minute; use something like 90m, 8h or 1d` });
      return z.NEVER;
    }
    return Math.round(ms / 1000);
  }),
]);

/** When the tenant's digest is posted: a cron in `timezone` (UTC when left out), such as weekdays at 9. */
export const digestSchema = z.object({ cron: cronSchema, timezone: timeZoneSchema.default('UTC') }).strict();

export const tenantSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'use lowercase letters, digits, dash or underscore (at most 63)'),
    name: z.string().min(1).max(200),
    channel: slackChannelId.optional(),
    /** Name of an environment variable holding this tenant's API token. */
    apiTokenEnv: envVarName.optional(),
    destinations: destinationListSchema.optional(),
    /** Recurring maintenance windows for every workflow of the tenant. */
    maintenance: z.array(maintenanceSchema).max(20).optional(),
    /** Evaluated and recorded as usual; notifications go only to the audit destination (the platform channel). */
    shadow: z.boolean().optional(),
    /** The only prefix this tenant's launchers set over the API may name in `secretEnv` (none when absent). */
    secretEnvPrefix: z.string().regex(/^[A-Z][A-Z0-9_]{1,62}_$/, 'an upper-case prefix ending in "_", such as "ACME_"').optional(),
    /** Hosts this tenant's http launchers set over the API may target, besides HTTP_LAUNCHER_ALLOWED_HOSTS. */
    launcherHosts: z
      .array(z.string().min(1).max(253).superRefine((e, ctx) => {
        const problem = allowListProblem(e);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }))
      .max(100)
      .optional(),
    rights: rightsSchema.optional(),
    oncall: onCallSchema.optional(),
    /** An ownership this old lapses back to unowned and escalation resumes; absent: ownership never expires. */
    ownershipExpiresAfter: durationSecondsSchema.optional(),
    /** The daily or weekly digest to the tenant channel (and email destinations); absent: only on demand. */
    digest: digestSchema.optional(),
  })
  .strict();

/** A workflow of the same tenant by name, or another tenant's as tenant/name. */
export const dependencyRef = z
  .string()
  .regex(
    /^(?:[a-z0-9][a-z0-9_-]{0,62}\/)?[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
    'a workflow name of the same tenant, or tenant/name for another tenant\'s workflow',
  );

export const workflowSchema = z
  .object({
    tenant: z.string().min(1),
    name,
    cron: cronSchema,
    timezone: timeZoneSchema.default('UTC'),
    /** managed (default when a launcher is given): the bot fires each tick; observed: an outside scheduler does. */
    mode: z.enum(['managed', 'observed']).optional(),
    launcher: launcherSchema.optional(),
    policy: policySchema.optional(),
    monitoring: z.boolean().default(true),
    paused: z.boolean().default(false),
    /** false: kept with its history but not watched (like removing it); its open alert is resolved. */
    enabled: z.boolean().default(true),
    /** Recurring maintenance windows: ticks inside one are recorded, not held against the workflow. */
    maintenance: z.array(maintenanceSchema).max(20).optional(),
    /** Shadow mode for this workflow alone (a tenant's `shadow` covers all of its workflows). */
    shadow: z.boolean().optional(),
    /** Workflows this one depends on: a name in the same tenant, or tenant/name (docs/workflows-file.md). */
    dependsOn: z.array(dependencyRef).max(50).optional(),
    /** Fixed ping key (at least 22 characters, as long as a generated one); generated and kept when absent. */
    pingKey: z
      .string()
      .regex(new RegExp(`^[A-Za-z0-9_-]{${PING_KEY_MIN_LENGTH},128}$`), `at least ${PING_KEY_MIN_LENGTH} letters, digits, "-" or "_" (128 bits, like a generated key)`)
      .optional(),
  })
  .strict()
  .superRefine((w, ctx) => {
    if (w.mode === 'managed' && !w.launcher) {
      ctx.addIssue({ code: 'custom', path: ['mode'], message: 'a managed workflow needs a launcher' });
    }
  }, alsoBesideShapeProblems);

export const workflowsFileSchema = z
  .object({
    $schema: z.string().optional(),
    tenants: z.array(tenantSchema),
    workflows: z.array(workflowSchema),
  })
  .strict();

export type WorkflowsFile = z.infer<typeof workflowsFileSchema>;
export type WorkflowSpec = z.infer<typeof workflowSchema>;
export type TenantSpec = z.infer<typeof tenantSchema>;
export type PolicySpec = z.infer<typeof policySchema>;
export type LauncherSpec = z.infer<typeof launcherSchema>;

export class WorkflowsFileError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source} is invalid:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'WorkflowsFileError';
  }
}

/**
 * Validates the file, including that every secret it names by environment
 * variable is set in `env` (and holds a usable value), all problems at once.
 * The values themselves are read again when the file is synced.
 */
export function parseWorkflowsFile(text: string, source = 'workflows file', env: SecretEnv = process.env): WorkflowsFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new WorkflowsFileError(source, [jsonSyntaxProblem(source, text, error)]);
  }
  const parsed = workflowsFileSchema.safeParse(raw);
  // The checks across the file run on what was written, so they come with the shape problems, not after them.
  const crossFile = crossFileIssues(raw, (r) => dependencyRef.safeParse(r).success);
  const issues = [...(parsed.success ? [] : parsed.error.issues), ...crossFile, ...unresolvedSecretIssues(raw, env)];
  const twice = duplicateJsonKeys(text).map((d) => `${source}:${d.line}: ${d.path}: "${d.key}" is given twice in one object; JSON keeps only the last, so remove one`);
  if (!parsed.success || issues.length || twice.length) throw new WorkflowsFileError(source, inFileOrder(source, [...twice, ...describeIssues(source, text, raw, issues, workflowsFileSchema)]));
  return parsed.data;
}

/** Problems top to bottom, as the operator walks the file fixing them (a line-less one first; the sort is stable). */
function inFileOrder(source: string, problems: string[]): string[] {
  const lineOf = (p: string) => (p.startsWith(`${source}:`) ? Number(/^:(\d+):/.exec(p.slice(source.length))?.[1] ?? 0) : 0);
  return problems.map((p) => ({ p, line: lineOf(p) })).sort((a, b) => a.line - b.line).map((x) => x.p);
}

export async function readWorkflowsFile(path: string, env: SecretEnv = process.env): Promise<WorkflowsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new WorkflowsFileError(path, [`${path}: cannot read: ${error instanceof Error ? error.message : String(error)}`]);
  }
  return parseWorkflowsFile(text, path, env);
}

/** JSON Schema of the file for editors, generated from the same zod schema. */
export function workflowsFileJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(workflowsFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
