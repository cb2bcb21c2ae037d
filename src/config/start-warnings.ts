import type { Config } from './env.js';
import type { WorkflowsFile } from './workflows-file.js';

/**
 * Email destinations named while `SMTP_URL` is unset: each of their
 * notifications would go dead at its first attempt ("SMTP_URL is not set"),
 * which an operator otherwise learns from the first alert nobody got by mail.
 * Warned about at start, by place; the start goes on (Slack still works).
 */
export function emailWithoutSmtp(file: Pick<WorkflowsFile, 'tenants'>, config: Pick<Config, 'SMTP_URL' | 'PLATFORM_DESTINATIONS'>): string[] {
  if (config.SMTP_URL) return [];
  const places = [
    ...file.tenants.flatMap((t, i) => (t.destinations ?? []).flatMap((d, j) => (d.kind === 'email' ? [`tenants[${i}].destinations[${j}] (tenant ${t.id})`] : []))),
    ...config.PLATFORM_DESTINATIONS.flatMap((d, j) => (d.kind === 'email' ? [`PLATFORM_DESTINATIONS[${j}]`] : [])),
  ];
  return places.length ? [`SMTP_URL is not set, so these email destinations cannot be delivered (their notifications go dead): ${places.join(', ')}`] : [];
}

/**
 * The environment variables a document names (`apiTokenEnv`, `secretEnv`,
 * `routingKeyEnv`: any field ending in `Env`), wherever they sit: the
 * workflows file, PLATFORM_DESTINATIONS.
 */
export function variablesNamedIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(variablesNamedIn);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => (k.endsWith('Env') && typeof v === 'string' ? [v] : variablesNamedIn(v)));
}
