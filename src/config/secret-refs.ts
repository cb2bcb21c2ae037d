import { z } from 'zod';
import type { LauncherConfig } from '../db/schema.js';
import type { DestinationInput, DestinationSpec, LauncherSpec } from './workflows-file.js';

/**
 * Secrets by reference: a webhook's `secret`, a PagerDuty `routingKey` and an
 * http launcher's `secret` may be given (a tenant's API token only is) as the name of an environment
 * variable (`secretEnv`, `routingKeyEnv`) so that the workflows file, the
 * tenants API body and PLATFORM_DESTINATIONS never carry the value. This
 * module holds the value rules (the same whichever way a secret arrives) and
 * turns references into values. Problems name the field and the variable,
 * never the variable's value.
 */

export type SecretEnv = Readonly<Record<string, string | undefined>>;

/** The name of an environment variable that holds a secret, so the file itself can be committed. */
export const envVarName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'the name of an environment variable, such as ACME_WEBHOOK_SECRET');

export const webhookSecret = z.string().min(16, 'secret must be at least 16 characters').max(512, 'secret must be at most 512 characters');
export const pagerDutyRoutingKey = z.string().regex(/^[A-Za-z0-9]{20,64}$/, 'a PagerDuty Events API v2 integration key (20 to 64 letters and digits)');
export const launcherSecret = z.string().min(16, 'secret must be at least 16 characters');

/** A problem in zod's issue shape, so describeIssues can place it on its line. */
export type SecretIssue = z.core.$ZodIssueCustom;

export type Resolution<T> = { ok: true; value: T } | { ok: false; issues: SecretIssue[] };

interface SecretField {
  inline: string;
  byEnv: string;
  value: z.ZodType<string>;
}

const DESTINATION_SECRETS: Record<string, SecretField> = {
  webhook: { inline: 'secret', byEnv: 'secretEnv', value: webhookSecret },
  pagerduty: { inline: 'routingKey', byEnv: 'routingKeyEnv', value: pagerDutyRoutingKey },
};
const LAUNCHER_SECRETS: Record<string, SecretField> = {
  http: { inline: 'secret', byEnv: 'secretEnv', value: launcherSecret },
};
/** A tenant's API token, as hard to guess as the admin token must be (API_TOKEN). */
export const tenantApiToken = z.string().min(16, 'a tenant API token must be at least 16 characters');
const TENANT_TOKEN: SecretField = { inline: 'apiToken', byEnv: 'apiTokenEnv', value: tenantApiToken };

/** The variable's value, or an issue at `path` (the `…Env` field) saying what is wrong with it. */
function readVariable(name: string, field: SecretField, env: SecretEnv, path: PropertyKey[]): Resolution<string> {
  const value = env[name];
  // An empty variable is how an unset one often looks after `export X=`: treat it as unset.
  if (value === undefined || value === '') return { ok: false, issues: [issue([...path, field.byEnv], 'names an environment variable that is not set')] };
  const checked = field.value.safeParse(value);
  if (!checked.success) return { ok: false, issues: [issue([...path, field.byEnv], `the variable's value is not valid: ${checked.error.issues[0]?.message ?? 'rejected'}`)] };
  return { ok: true, value };
}

function issue(path: PropertyKey[], message: string): SecretIssue {
  return { code: 'custom', path, message };
}

/** Replaces the `…Env` field of `entry` (already validated) by the inline field holding the variable's value. */
function resolveEntry<T extends Record<string, unknown>>(entry: T, field: SecretField | undefined, env: SecretEnv, path: PropertyKey[]): Resolution<Record<string, unknown>> {
  const name = field ? entry[field.byEnv] : undefined;
  if (!field || typeof name !== 'string') return { ok: true, value: entry };
  const read = readVariable(name, field, env, path);
  if (!read.ok) return read;
  const { [field.byEnv]: _reference, ...rest } = entry;
  return { ok: true, value: { ...rest, [field.inline]: read.value } };
}

export function resolveDestination(d: DestinationInput, env: SecretEnv, path: PropertyKey[] = []): Resolution<DestinationSpec> {
  return resolveEntry(d, DESTINATION_SECRETS[d.kind], env, path) as Resolution<DestinationSpec>;
}

export function resolveDestinations(list: readonly DestinationInput[], env: SecretEnv, path: PropertyKey[] = []): Resolution<DestinationSpec[]> {
  const value: DestinationSpec[] = [];
  const issues: SecretIssue[] = [];
  list.forEach((d, i) => {
    const r = resolveDestination(d, env, [...path, i]);
    if (r.ok) value.push(r.value);
    else issues.push(...r.issues);
  });
  return issues.length ? { ok: false, issues } : { ok: true, value };
}

/** An http launcher without either form keeps no secret: it signs with LAUNCHER_SECRET. */
export function resolveLauncher(l: LauncherSpec, env: SecretEnv, path: PropertyKey[] = []): Resolution<LauncherConfig> {
  return resolveEntry(l, LAUNCHER_SECRETS[l.kind], env, path) as Resolution<LauncherConfig>;
}

/**
 * Every reference in a workflows file (as parsed JSON, valid or not) whose
 * variable is unset or holds an unusable value. Read from the raw document so
 * that these come out together with the schema's own problems at start.
 */
export function unresolvedSecretIssues(raw: unknown, env: SecretEnv): SecretIssue[] {
  const issues: SecretIssue[] = [];
  const check = (entry: unknown, fields: Record<string, SecretField>, path: PropertyKey[]) => {
    if (!isObject(entry) || typeof entry.kind !== 'string') return;
    const field = fields[entry.kind];
    const name = field ? entry[field.byEnv] : undefined;
    // A malformed name is the schema's to report.
    if (!field || typeof name !== 'string' || !envVarName.safeParse(name).success) return;
    const read = readVariable(name, field, env, path);
    if (!read.ok) issues.push(...read.issues);
  };
  if (!isObject(raw)) return issues;
  listOf(raw.tenants).forEach((t, i) => {
    if (!isObject(t)) return;
    listOf(t.destinations).forEach((d, j) => check(d, DESTINATION_SECRETS, ['tenants', i, 'destinations', j]));
    // An unset token variable used to leave the tenant without a token (or with the one it had), and a one-letter token was taken.
    if (typeof t.apiTokenEnv === 'string' && envVarName.safeParse(t.apiTokenEnv).success) {
      const read = readVariable(t.apiTokenEnv, TENANT_TOKEN, env, ['tenants', i]);
      if (!read.ok) issues.push(...read.issues);
    }
  });
  listOf(raw.workflows).forEach((w, i) => {
    if (isObject(w)) check(w.launcher, LAUNCHER_SECRETS, ['workflows', i, 'launcher']);
  });
  return issues;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function listOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** A secret given inline or by the name of an environment variable: exactly one of the two. */
export function exactlyOne(inline: string, byEnv: string, missing = `give "${inline}" or "${byEnv}" (the name of an environment variable holding it)`) {
  return (value: Record<string, unknown>, ctx: z.core.$RefinementCtx) => {
    const given = [inline, byEnv].filter((k) => value[k] !== undefined).length;
    if (given === 0) ctx.addIssue({ code: 'custom', path: [inline], message: missing });
    if (given === 2) ctx.addIssue({ code: 'custom', path: [byEnv], message: `give "${inline}" or "${byEnv}", not both` });
  };
}
