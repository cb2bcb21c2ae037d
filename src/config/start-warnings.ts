import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
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

/**
 * Command launchers whose program is a path (it holds a `/`) that does not
 * exist, relative to the launcher's `cwd` or the bot's own: a typo there was
 * learned at the first tick (`exited with code 127: … not found`), perhaps at
 * 02:00. Warned about at start, by place and value; the start goes on, since
 * the program may be deployed after the bot. Only the first word of the shell
 * line is looked at (after `NAME=value` assignments, quotes removed); a bare
 * name is left to the shell's PATH and builtins.
 */
export function missingCommandPaths(file: Pick<WorkflowsFile, 'workflows'>, cwd: string): string[] {
  return file.workflows.flatMap((w, i) => {
    if (w.launcher?.kind !== 'command') return [];
    const program = firstWord(w.launcher.command);
    if (program === undefined || !program.includes('/')) return [];
    const dir = resolve(cwd, w.launcher.cwd ?? '.');
    if (existsSync(resolve(dir, program))) return [];
    return [`workflows[${i}].launcher.command: "${program}" does not exist (looked for in ${dir}); its runs will fail with exit code 127 until it does (got ${JSON.stringify(w.launcher.command)})`];
  });
}

function firstWord(command: string): string | undefined {
  const words = command.trim().match(/"[^"]*"|'[^']*'|[^\s;&|()<>]+/g) ?? [];
  const word = words.find((x) => !/^[A-Za-z_]\w*=/.test(x));
  return word?.replace(/^["']|["']$/g, '');
}
