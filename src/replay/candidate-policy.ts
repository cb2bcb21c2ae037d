import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { describeIssues, policySchema } from '../config/workflows-file.js';
import type { PolicyOverrides } from '../db/schema.js';
import { ScenarioError, type ScenarioInput } from './scenario.js';

/**
 * A candidate policy for `replay --from-db --policy candidate.json`: either
 * overrides for every replayed workflow (`{"alertAfter": 4}`), or per
 * workflow with an optional default:
 * `{"default": {"alertAfter": 4}, "workflows": {"nightly": {"retries": 1}}}`.
 * A candidate's fields are laid over each workflow's own overrides in force.
 */
const perWorkflow = z
  .object({
    default: policySchema.optional(),
    workflows: z.record(z.string().min(1), policySchema).optional(),
  })
  .strict()
  .refine((c) => c.default || c.workflows, 'give "default" and/or "workflows"');

/** A candidate that cannot be used: named as what it is, the file given to --policy, not as a scenario. */
export class CandidatePolicyError extends ScenarioError {
  constructor(source: string, problems: string[]) {
    super(source, problems);
    this.name = 'CandidatePolicyError';
    this.message = `--policy ${source} is not a valid candidate policy:\n${problems.map((p) => `  ${p}`).join('\n')}`;
  }
}

export type CandidatePolicy = { default?: PolicyOverrides; workflows?: Record<string, PolicyOverrides> };

export function checkCandidatePolicy(raw: unknown, source: string, text?: string): CandidatePolicy {
  const isPerWorkflow = typeof raw === 'object' && raw !== null && ('default' in raw || 'workflows' in raw);
  const parsed = isPerWorkflow ? perWorkflow.safeParse(raw) : policySchema.safeParse(raw);
  if (!parsed.success) throw new CandidatePolicyError(source, describeIssues(source, text, raw, parsed.error.issues));
  return isPerWorkflow ? (parsed.data as CandidatePolicy) : { default: parsed.data as PolicyOverrides };
}

export async function readCandidatePolicy(path: string): Promise<CandidatePolicy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CandidatePolicyError(path, [`${path}: cannot read: ${error instanceof Error ? error.message : String(error)}`]);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new CandidatePolicyError(path, [`${path}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`]);
  }
  return checkCandidatePolicy(raw, path, text);
}

/**
 * The same scenario with the candidate's fields laid over each workflow's
 * policy, and over each policy change the scenario replays (the candidate's
 * fields hold throughout; the others follow what the operator changed);
 * unknown workflow names are an error.
 */
export function applyCandidate(scenario: ScenarioInput, candidate: CandidatePolicy, source = 'candidate policy'): ScenarioInput {
  const names = new Set(scenario.workflows.map((w) => w.name));
  const unknown = Object.keys(candidate.workflows ?? {}).filter((n) => !names.has(n));
  if (unknown.length > 0) throw new CandidatePolicyError(source, unknown.map((n) => `${source}: workflows.${n}: not a replayed workflow (replayed: ${[...names].join(', ')})`));
  const over = (name: string, policy: PolicyOverrides | undefined) => ({ ...(policy ?? {}), ...(candidate.default ?? {}), ...(candidate.workflows?.[name] ?? {}) });
  // A change names its workflow as the scenario does (name, or tenant/name).
  const nameOf = (ref: string) => ref.slice(ref.indexOf('/') + 1);
  return {
    ...scenario,
    workflows: scenario.workflows.map((w) => ({ ...w, policy: over(w.name, w.policy) })),
    ...(scenario.policyChanges ? { policyChanges: scenario.policyChanges.map((c) => ({ ...c, policy: over(nameOf(c.workflow), c.policy) })) } : {}),
  };
}
