import { describeIssues, WorkflowsFileError, type DestinationSpec, type WorkflowsFile, type WorkflowSpec } from '../config/workflows-file.js';
import { resolveDestinations, resolveLauncher, type SecretEnv, type SecretIssue } from '../config/secret-refs.js';
import type { LauncherConfig } from '../db/schema.js';
import { rememberSecrets, secretsOfEntry } from '../secrets.js';

export type FileSecrets = ReturnType<typeof resolveFileSecrets>;

/**
 * Secrets named by environment variable (`secretEnv`, `routingKeyEnv`) are
 * resolved here, at sync, not when a notification or launch is sent:
 * - what is stored is exactly what an inline secret gives, so the engine's
 *   routing, the outbox's destination ids and the transports have one shape
 *   to handle; moving a PagerDuty key from the file into the environment
 *   keeps its destinationId (a digest of the value), and an open incident
 *   still gets its resolve;
 * - every replica signs and pages with the secret the last sync wrote, not
 *   with whatever its own environment holds mid-rollout;
 * - an unset variable stops the start with the file's other problems
 *   (parseWorkflowsFile checks the same), instead of dead notifications later.
 * The cost: the value sits in tenants.destinations / workflows.launcher, as
 * inline secrets always have; no API view returns it.
 */
export function resolveFileSecrets(file: WorkflowsFile, env: SecretEnv) {
  const destinations = new Map<string, DestinationSpec[]>();
  const launchers = new Map<WorkflowSpec, LauncherConfig>();
  const issues: SecretIssue[] = [];
  file.tenants.forEach((t, i) => {
    const r = resolveDestinations(t.destinations ?? [], env, ['tenants', i, 'destinations']);
    if (r.ok) destinations.set(t.id, r.value);
    else issues.push(...r.issues);
  });
  file.workflows.forEach((w, i) => {
    if (!w.launcher) return;
    const r = resolveLauncher(w.launcher, env, ['workflows', i, 'launcher']);
    // The file is the operator's: its launchers are trusted (docs/security.md).
    if (r.ok) launchers.set(w, { ...r.value, operatorSet: true });
    else issues.push(...r.issues);
  });
  if (issues.length) throw new WorkflowsFileError('workflows file', describeIssues('workflows file', undefined, file, issues));
  rememberSecrets([...destinations.values()].flat().flatMap(secretsOfEntry));
  rememberSecrets([...launchers.values()].flatMap(secretsOfEntry));
  return { destinations, launchers };
}
