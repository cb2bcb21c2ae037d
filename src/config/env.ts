import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import cron from 'node-cron';
import { z } from 'zod';
import { allowListProblem } from '../domain/address-policy.js';
import { misspelledNames } from '../domain/names.js';
import { resolveCommandUser } from './command-user.js';
import { formatPath, valueAt } from './json-locate.js';
import { slackChannelId } from './destination-schema.js';
import { platformOnCall } from './platform-oncall.js';
import { resolveDestinations } from './secret-refs.js';
import { destinationListSchema, type DestinationInput, type DestinationSpec } from './workflows-file.js';
import { secretsOfEntry } from '../secrets.js';

/**
 * A number from the environment. Blank (`PORT=` in an env file, `${PORT}` of
 * an unset variable) is unset, so the default: z.coerce reads '' as 0, which
 * made `PORT=` a random port, `STORM_MIN_ALERTS=` storms off and
 * `SHUTDOWN_GRACE_SECONDS=` no grace, silently.
 */
const envNumber = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), schema);
/**
 * A loop's interval: at least 0.1 s (a smaller one is a hot loop against the
 * database) and at most a day (past 2^31 ms, about 24.8 days, Node's timers
 * fire at once, so a huge value was a hot loop too).
 */
const seconds = (fallback: number) => envNumber(z.coerce.number().min(0.1).max(86_400).default(fallback));
/** A wait in seconds, 0 allowed: at most a day (Node's timers overflow past 24.8 days and fire at once). */
const waitSeconds = (fallback: number) => envNumber(z.coerce.number().min(0).max(86_400).default(fallback));
/** Days of retention: at most 100 years (a cut-off date must exist). */
const retentionDays = (fallback: number) => envNumber(z.coerce.number().int().min(1).max(36_500).default(fallback));
const optionalText = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

const slackUserList = z
  .string()
  .default('')
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^[UW][A-Z0-9]+$/, 'Slack user ids look like U0123ABCD')));

/**
 * Platform destinations as a JSON list of the workflows file's destination
 * shapes; each problem names its place in the list (values of secret fields
 * hidden). Secrets given by variable name are resolved in loadConfig, which
 * has the environment.
 */
const platformDestinations = z
  .string()
  .trim()
  .default('')
  .transform((text, ctx): DestinationInput[] => {
    if (text === '') return [];
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `not valid JSON: ${error instanceof Error ? error.message : String(error)}` });
      return z.NEVER;
    }
    const parsed = destinationListSchema.safeParse(raw);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: `${formatPath(issue.path) || '(list)'}: ${issue.message}` });
    return z.NEVER;
  });

export const envSchema = z.object({
  DATABASE_URL: optionalText.pipe(z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }).optional()),
  DATA_DIR: z.string().trim().min(1).default('./.data'),
  PORT: envNumber(z.coerce.number().int().min(0).max(65535).default(3000)),
  HOST: z.string().trim().min(1).default('0.0.0.0'),
  PUBLIC_URL: optionalText.pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional()),
  WORKFLOWS_FILE: optionalText,
  PLATFORM_CHANNEL: optionalText.pipe(slackChannelId.optional()),
  /** The operator's on-call (a group and/or users) a page falls to when a tenant's on-call reaches nobody; paged in PLATFORM_CHANNEL. */
  PLATFORM_ONCALL: platformOnCall,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  POLL_INTERVAL_SECONDS: seconds(30),
  ESCALATION_INTERVAL_SECONDS: seconds(60),
  TICK_INTERVAL_SECONDS: seconds(1),
  SHUTDOWN_GRACE_SECONDS: waitSeconds(10),
  STARTUP_DATABASE_WAIT_SECONDS: waitSeconds(300),
  API_TOKEN: optionalText.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /** When set, GET /metrics needs it (or API_TOKEN) as a Bearer token. */
  METRICS_TOKEN: optionalText.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  /** Signs the operator's http launches; as long as any launcher's own `secret` must be. */
  LAUNCHER_SECRET: optionalText.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  SLACK_BOT_TOKEN: optionalText.pipe(z.string().startsWith('xoxb-', 'must start with xoxb-').optional()),
  SLACK_SIGNING_SECRET: optionalText,
  SLACK_APP_TOKEN: optionalText.pipe(z.string().startsWith('xapp-', 'must start with xapp-').optional()),
  SLACK_API_URL: optionalText.pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional()),
  ADMIN_USERS: slackUserList,
  SMTP_URL: optionalText.pipe(z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL' }).optional()),
  SMTP_FROM: z.string().trim().min(3).default('scheduler-bot <scheduler-bot@localhost>'),
  /** Destinations (email, webhook, pagerduty, slack) told about every tenant's alerts. */
  PLATFORM_DESTINATIONS: platformDestinations,
  /** PagerDuty Events API v2 endpoint; overridable for tests and EU service regions. */
  EVENTS_API_URL: z.url({ protocol: /^https?$/ }).default('https://events.pagerduty.com/v2/enqueue'),
  /** A destination failing (transiently) for longer than this raises one notice: log line, metric, platform channel. */
  DESTINATION_OUTAGE_NOTICE_MINUTES: envNumber(z.coerce.number().positive().max(7 * 24 * 60).default(15)),
  /** Retention (see docs/retention.md): finished runs, resolved alerts and settled notifications older than this many days are removed. */
  RUN_RETENTION_DAYS: retentionDays(30),
  ALERT_RETENTION_DAYS: retentionDays(180),
  NOTIFICATION_RETENTION_DAYS: retentionDays(30),
  /** Rows per delete statement of the retention pass. */
  RETENTION_BATCH: envNumber(z.coerce.number().int().min(100).max(100_000).default(5000)),
  /** When the retention pass runs (node-cron syntax, UTC); one replica runs each firing. */
  RETENTION_CRON: z.string().trim().default('17 * * * *').refine((v) => cron.validate(v), 'must be a cron expression (node-cron syntax), e.g. 17 * * * *'),
  REPLICA_ID: z.string().trim().min(1).default(`${hostname()}:${process.pid}`),
  /** Hosts a tenant's http launcher may target (comma-separated names, IPs or CIDRs); the operator's file and admin token are not limited. */
  HTTP_LAUNCHER_ALLOWED_HOSTS: z
    .string()
    .default('')
    .transform((v) => v.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
    .superRefine((entries, ctx) => {
      for (const e of entries) {
        const problem = allowListProblem(e);
        if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(e)}: ${problem}` });
      }
    }),
  /** Run command launchers as this unprivileged user (name or uid) instead of the bot's own. */
  COMMAND_USER: optionalText,
  /** Unknown-key pings one client address may send per minute before 429. */
  PING_UNKNOWN_PER_MINUTE: envNumber(z.coerce.number().int().min(1).max(100_000).default(30)),
  /** Enabled workflows a tenant token may have in its tenant (the file and the admin token are not bound); past it, 403 workflow_limit. */
  MAX_WORKFLOWS_PER_TENANT: envNumber(z.coerce.number().int().min(1).max(10_000_000).default(5000)),
  /** One-off maintenance windows not yet ended a tenant may have, set with its token or from its channel; past it, refused naming it. */
  MAX_MAINTENANCE_WINDOWS_PER_TENANT: envNumber(z.coerce.number().int().min(1).max(1_000_000).default(200)),
  /** Runs a tenant may report per minute (API reports and pings; each replica counts its own); past it, 429. */
  TENANT_REPORTS_PER_MINUTE: envNumber(z.coerce.number().int().min(1).max(10_000_000).default(12_000)),
  /** Openings in one channel within STORM_WINDOW_SECONDS that make one storm message (0: never a storm). */
  STORM_MIN_ALERTS: envNumber(z.coerce.number().int().min(0).max(10_000).default(5)),
  STORM_WINDOW_SECONDS: envNumber(z.coerce.number().int().min(1).max(86_400).default(120)),
  /** Workflows with an open alert in one error group within SHARED_CAUSE_WINDOW_SECONDS that make a shared cause (0: off). */
  SHARED_CAUSE_MIN_WORKFLOWS: envNumber(z.coerce.number().int().min(0).max(10_000).default(3)),
  SHARED_CAUSE_WINDOW_SECONDS: envNumber(z.coerce.number().int().min(60).max(7 * 86_400).default(3600)),
});

export type Env = z.infer<typeof envSchema>;
export type Config = Readonly<
  Omit<Env, 'PLATFORM_DESTINATIONS'> & {
    PLATFORM_DESTINATIONS: DestinationSpec[];
    /**
     * The database's destination id key (migration 0019), which names webhook
     * destinations without their URL (destinationId). Not from the
     * environment: loaded after the migrations (withDestinationIdKey,
     * src/ledger/destination-id-key.ts), before anything routes.
     */
    destinationIdKey?: string;
  }
>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const SECRET = /TOKEN|SECRET|PASSWORD|SMTP_URL|DATABASE_URL|PLATFORM_DESTINATIONS/;

/** Variables that may instead be read from a file named by `<NAME>_FILE` (Docker/Kubernetes secrets). */
export const FILE_VARIABLES = ['SLACK_BOT_TOKEN', 'SLACK_SIGNING_SECRET', 'SLACK_APP_TOKEN', 'API_TOKEN', 'METRICS_TOKEN', 'LAUNCHER_SECRET', 'SMTP_URL', 'DATABASE_URL', 'PLATFORM_DESTINATIONS'];
/** Besides those, any variable named like a secret (a tenant's token, a launcher's or webhook's secretEnv). */
const FILE_VARIABLE = /(TOKEN|SECRET|PASSWORD|KEY)$/;

/**
 * `<NAME>_FILE=/run/secrets/x` sets NAME to the file's content (one trailing
 * newline dropped), so a secret need not sit in the environment. Both set is
 * a mistake, reported naming both; so is a file that cannot be read.
 */
export function readSecretFiles(env: Record<string, string | undefined>): { env: Record<string, string | undefined>; problems: string[] } {
  const out = { ...env };
  const problems: string[] = [];
  for (const [key, path] of Object.entries(env)) {
    if (!key.endsWith('_FILE') || path === undefined || path.trim() === '') continue;
    const name = key.slice(0, -'_FILE'.length);
    if (!FILE_VARIABLES.includes(name) && !FILE_VARIABLE.test(name)) continue;
    if (env[name] !== undefined && env[name] !== '') {
      problems.push(`${name} and ${key}: both are set; give one or the other`);
      continue;
    }
    try {
      out[name] = readFileSync(path.trim(), 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      problems.push(`${key}=${JSON.stringify(path)}: cannot read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  }
  return { env: out, problems };
}

/** The configuration's secret values, for the redactor (src/secrets.ts). */
export function configSecrets(config: Config): string[] {
  const smtpPassword = config.SMTP_URL ? safeUrlPassword(config.SMTP_URL) : undefined;
  const dbPassword = config.DATABASE_URL ? safeUrlPassword(config.DATABASE_URL) : undefined;
  // Each destination's secret or routing key, a password in its URL, and its credential headers (Authorization, API keys), as for a tenant's.
  const platform = config.PLATFORM_DESTINATIONS.flatMap(secretsOfEntry);
  return [config.SLACK_BOT_TOKEN, config.SLACK_SIGNING_SECRET, config.SLACK_APP_TOKEN, config.API_TOKEN, config.METRICS_TOKEN, config.LAUNCHER_SECRET, config.destinationIdKey, smtpPassword, dbPassword, ...platform].filter(
    (v): v is string => typeof v === 'string' && v !== '',
  );
}

function safeUrlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A variable set to nothing (`LOG_LEVEL=` in an env file, `${X}` of an unset
 * one) is unset: its default, for every variable, not only the numbers.
 */
function withoutBlanks(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) out[k] = v !== undefined && v.trim() === '' ? undefined : v;
  return out;
}

/** Every variable the bot reads, with the `_FILE` twins of its secrets. */
export const KNOWN_VARIABLES: readonly string[] = [...Object.keys(envSchema.shape), ...FILE_VARIABLES.map((v) => `${v}_FILE`)];

/**
 * Variables set but read by nobody that are a typo away from one the bot
 * reads (`SLACK_BOT_TOKN`, `Port`): warned about at start, since the
 * environment holds other programs' variables too, never refused.
 * `alsoRead`: the variables the workflows file names (`apiTokenEnv`,
 * `secretEnv`, `routingKeyEnv`), which are read, whatever they look like.
 */
export function misspelledVariables(env: Record<string, string | undefined>, alsoRead: readonly string[] = []): string[] {
  const read = new Set(alsoRead);
  return misspelledNames(Object.keys(env).filter((name) => !read.has(name)), KNOWN_VARIABLES).map((m) => `${m.name} is set but not read; did you mean ${m.meant}?`);
}

/** Every bad variable at once, each by name and (unless secret) value. */
export function loadConfig(given: Record<string, string | undefined> = process.env): Config {
  const files = readSecretFiles(given);
  if (files.problems.length) throw new ConfigError(files.problems);
  const env = withoutBlanks(files.env);
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? '(environment)');
      const raw = env[name];
      const shown = raw === undefined ? '(unset)' : SECRET.test(name) ? '(hidden)' : JSON.stringify(raw);
      return `${name}=${shown}: ${issue.message}`;
    });
    throw new ConfigError(problems);
  }
  const config = parsed.data;
  const slackProblems: string[] = [];
  if (config.SLACK_BOT_TOKEN && !config.SLACK_APP_TOKEN && !config.SLACK_SIGNING_SECRET) {
    slackProblems.push('SLACK_SIGNING_SECRET=(unset): required with SLACK_BOT_TOKEN in HTTP mode (or set SLACK_APP_TOKEN for Socket Mode)');
  }
  if ((config.SLACK_SIGNING_SECRET || config.SLACK_APP_TOKEN) && !config.SLACK_BOT_TOKEN) {
    slackProblems.push('SLACK_BOT_TOKEN=(unset): required when SLACK_SIGNING_SECRET or SLACK_APP_TOKEN is set');
  }
  if (config.PLATFORM_ONCALL && !config.PLATFORM_CHANNEL) {
    slackProblems.push(`PLATFORM_ONCALL=${JSON.stringify(env.PLATFORM_ONCALL)}: needs PLATFORM_CHANNEL, the channel the platform's on-call is paged in`);
  }
  if (slackProblems.length) throw new ConfigError(slackProblems);
  if (config.COMMAND_USER) {
    const user = resolveCommandUser(config.COMMAND_USER);
    if ('error' in user) throw new ConfigError([user.error]);
  }
  const platform = resolveDestinations(config.PLATFORM_DESTINATIONS, env);
  if (!platform.ok) {
    throw new ConfigError(platform.issues.map((i) => `PLATFORM_DESTINATIONS=(hidden): ${formatPath(i.path)}: ${i.message} (got ${JSON.stringify(valueAt(config.PLATFORM_DESTINATIONS, i.path))})`));
  }
  return Object.freeze({ ...config, PLATFORM_DESTINATIONS: platform.value });
}

export type SlackMode = 'http' | 'socket' | 'console';

export function slackMode(config: Config): SlackMode {
  if (!config.SLACK_BOT_TOKEN) return 'console';
  return config.SLACK_APP_TOKEN ? 'socket' : 'http';
}
