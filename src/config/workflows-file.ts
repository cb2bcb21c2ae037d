import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { NOTIFIED_EVENT_KINDS } from '../domain/events.js';
import { checkCron, isTimeZone } from '../domain/schedule.js';
import { formatPath, locateJsonPaths, valueAt } from './json-locate.js';

const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'use letters, digits, dot, dash or underscore (at most 100), starting with a letter or digit');

export const policySchema = z
  .object({
    retries: z.number().int().min(0).max(10).optional(),
    alertAfter: z.number().int().min(1).max(100).optional(),
    firstSeverity: z.enum(['warning', 'critical']).optional(),
    escalationMultiplier: z.number().positive().max(1000).optional(),
    recoverAfter: z.number().int().min(1).max(100).optional(),
    graceSeconds: z.number().int().min(0).max(7 * 86_400).optional(),
    timeoutSeconds: z.number().int().min(1).max(7 * 86_400).optional(),
    minRows: z.number().int().min(0).optional(),
  })
  .strict();

export const cronSchema = z.string().superRefine((cron, ctx) => {
  const check = checkCron(cron);
  if (!check.ok) ctx.addIssue({ code: 'custom', message: `invalid cron: ${check.reason}` });
});

export const timeZoneSchema = z.string().refine(isTimeZone, 'not an IANA time zone (such as "Europe/Berlin" or "UTC")');

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
      headers: z.record(z.string(), z.string()).optional(),
      /** Overrides LAUNCHER_SECRET for this target. */
      secret: z.string().min(16).optional(),
    })
    .strict(),
]);

export const DESTINATION_KINDS = ['slack', 'email', 'webhook', 'pagerduty'] as const;

const routingFields = {
  /** Which events to deliver after the opening; the opening and `resolved` always go (a thread needs its start and end). */
  events: z.array(z.enum(NOTIFIED_EVENT_KINDS)).min(1).optional(),
  /** Lowest alert severity this destination hears about (pagerduty defaults to critical, the rest to warning). */
  minSeverity: z.enum(['warning', 'critical']).optional(),
};

const secretText = (what: string) => z.string().min(16, `${what} must be at least 16 characters`).max(512);

/**
 * Where an alert's events go besides the tenant's own channel and the
 * platform channel. One shape per kind; the engine routes by `events` and
 * `minSeverity`, the sender delivers by `kind`.
 */
export const destinationSchema = z.discriminatedUnion(
  'kind',
  [
    z
      .object({
        kind: z.literal('slack'),
        channel: z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'a Slack channel id such as C0123ABCD'),
        ...routingFields,
      })
      .strict(),
    z
      .object({
        kind: z.literal('email'),
        to: z.array(z.email('an email address such as ops@example.com')).min(1).max(50),
        ...routingFields,
      })
      .strict(),
    z
      .object({
        kind: z.literal('webhook'),
        url: z.url({ protocol: /^https?$/, error: 'an http(s) URL' }),
        /** HMAC-SHA256 key for the X-Scheduler-Signature header; share it with the receiver. */
        secret: secretText('secret'),
        headers: z.record(z.string(), z.string()).optional(),
        ...routingFields,
      })
      .strict(),
    z
      .object({
        kind: z.literal('pagerduty'),
        /** The Events API v2 integration key of a PagerDuty service. */
        routingKey: z.string().regex(/^[A-Za-z0-9]{20,64}$/, 'a PagerDuty Events API v2 integration key (20 to 64 letters and digits)'),
        ...routingFields,
      })
      .strict(),
  ],
  { error: (issue) => (issue.code === 'invalid_union' ? `kind must be one of ${DESTINATION_KINDS.map((k) => `"${k}"`).join(', ')}` : undefined) },
);

export const destinationListSchema = z
  .array(destinationSchema)
  .max(20)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((d, i) => {
      const id = destinationId(d);
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate destination "${id}"` });
      seen.add(id);
    });
  });

/**
 * The destination's identity in the outbox (`notifications.destination`, and
 * so in every idempotency key): `kind:target`. Secrets never appear in it; a
 * PagerDuty destination is named by a digest of its routing key.
 */
export function destinationId(d: DestinationSpec): string {
  switch (d.kind) {
    case 'slack':
      return `slack:${d.channel}`;
    case 'email':
      return `email:${[...d.to].map((a) => a.toLowerCase()).sort().join(',')}`;
    case 'webhook':
      return `webhook:${d.url}`;
    case 'pagerduty':
      return `pagerduty:${createHash('sha256').update(d.routingKey).digest('hex').slice(0, 12)}`;
  }
}

export const tenantSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'use lowercase letters, digits, dash or underscore (at most 63)'),
    name: z.string().min(1).max(200),
    channel: z.string().regex(/^[CG][A-Z0-9]{2,}$/, 'a Slack channel id such as C0123ABCD').optional(),
    /** Name of an environment variable holding this tenant's API token. */
    apiTokenEnv: z.string().regex(/^[A-Z_][A-Z0-9_]*$/).optional(),
    destinations: destinationListSchema.optional(),
  })
  .strict();

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
    /** Fixed ping key (at least 16 characters); generated and kept when absent. */
    pingKey: z.string().regex(/^[A-Za-z0-9_-]{16,128}$/).optional(),
  })
  .strict()
  .superRefine((w, ctx) => {
    if (w.mode === 'managed' && !w.launcher) {
      ctx.addIssue({ code: 'custom', path: ['mode'], message: 'a managed workflow needs a launcher' });
    }
  });

export const workflowsFileSchema = z
  .object({
    $schema: z.string().optional(),
    tenants: z.array(tenantSchema),
    workflows: z.array(workflowSchema),
  })
  .strict()
  .superRefine((file, ctx) => {
    const tenantIds = new Set<string>();
    file.tenants.forEach((t, i) => {
      if (tenantIds.has(t.id)) ctx.addIssue({ code: 'custom', path: ['tenants', i, 'id'], message: 'duplicate tenant id' });
      tenantIds.add(t.id);
    });
    const channels = new Map<string, string>();
    file.tenants.forEach((t, i) => {
      if (!t.channel) return;
      const other = channels.get(t.channel);
      if (other) ctx.addIssue({ code: 'custom', path: ['tenants', i, 'channel'], message: `channel already belongs to tenant "${other}"` });
      channels.set(t.channel, t.id);
    });
    const names = new Set<string>();
    file.workflows.forEach((w, i) => {
      if (!tenantIds.has(w.tenant)) ctx.addIssue({ code: 'custom', path: ['workflows', i, 'tenant'], message: 'unknown tenant' });
      const key = `${w.tenant}/${w.name}`;
      if (names.has(key)) ctx.addIssue({ code: 'custom', path: ['workflows', i, 'name'], message: `duplicate workflow name in tenant "${w.tenant}"` });
      names.add(key);
    });
  });

export type WorkflowsFile = z.infer<typeof workflowsFileSchema>;
export type WorkflowSpec = z.infer<typeof workflowSchema>;
export type TenantSpec = z.infer<typeof tenantSchema>;
export type PolicySpec = z.infer<typeof policySchema>;
export type LauncherSpec = z.infer<typeof launcherSchema>;
export type DestinationSpec = z.infer<typeof destinationSchema>;

export class WorkflowsFileError extends Error {
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`${source} is invalid:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'WorkflowsFileError';
  }
}

/** Fields whose values an error message must not repeat. */
const SECRET_FIELDS = new Set(['secret', 'routingKey']);

/** One line per problem: `file:line: path: message (got value)`. */
export function describeIssues(source: string, text: string | undefined, root: unknown, issues: readonly z.core.$ZodIssue[]): string[] {
  const lines = text ? locateJsonPaths(text) : new Map<string, number>();
  return issues.map((issue) => {
    const path = formatPath(issue.path);
    let line = lines.get(path);
    for (let p = [...issue.path]; line === undefined && p.length > 0; p = p.slice(0, -1)) line = lines.get(formatPath(p.slice(0, -1)));
    const where = `${source}${line ? `:${line}` : ''}`;
    const value = SECRET_FIELDS.has(String(issue.path[issue.path.length - 1])) ? '(hidden)' : valueAt(root, issue.path);
    const got = value === undefined ? '' : ` (got ${truncate(JSON.stringify(value), 120)})`;
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') message = `unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    return `${where}: ${path || '(root)'}: ${message}${issue.code === 'unrecognized_keys' ? '' : got}`;
  });
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function parseWorkflowsFile(text: string, source = 'workflows file'): WorkflowsFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new WorkflowsFileError(source, [`${source}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`]);
  }
  const parsed = workflowsFileSchema.safeParse(raw);
  if (!parsed.success) throw new WorkflowsFileError(source, describeIssues(source, text, raw, parsed.error.issues));
  return parsed.data;
}

export async function readWorkflowsFile(path: string): Promise<WorkflowsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new WorkflowsFileError(path, [`${path}: cannot read: ${error instanceof Error ? error.message : String(error)}`]);
  }
  return parseWorkflowsFile(text, path);
}

/** JSON Schema of the file for editors, generated from the same zod schema. */
export function workflowsFileJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(workflowsFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
