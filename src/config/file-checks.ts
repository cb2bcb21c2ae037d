import type { z } from 'zod';
import { dependencyProblems, dependencyRefText } from '../domain/dependencies.js';
import { misspelledNames } from '../domain/names.js';

/**
 * The checks across the workflows file (duplicate tenant ids, workflow
 * names and ping keys, a channel named by two tenants, a workflow of an unknown tenant,
 * dependencies on no workflow or in a cycle), run on the file as written so
 * that they are reported with the shape problems of the same file, not after
 * those are fixed (zod skips an object's refinements once any of its fields
 * fails). Each check reads only the fields it needs and skips an entry whose
 * field is not there to read: the shape check names that one. A check that
 * needs the whole list (is this tenant known? is this a workflow of the
 * file?) stays silent while an entry of that list cannot be read, rather
 * than blame a reference that may be right.
 */

type Issue = z.core.$ZodIssue;

const objects = (list: unknown): (Record<string, unknown> | undefined)[] =>
  Array.isArray(list) ? list.map((e) => (e !== null && typeof e === 'object' && !Array.isArray(e) ? (e as Record<string, unknown>) : undefined)) : [];
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** The one of `known` that `given` is a typo (or another case) of, if any. */
export function meantName(given: string, known: readonly string[]): string | undefined {
  const upper = known.map((k) => k.toUpperCase());
  // misspelledNames passes a name known in any case: here another case is the typo.
  const sameLetters = upper.indexOf(given.toUpperCase());
  const [hit] = sameLetters >= 0 ? [{ meant: upper[sameLetters]! }] : misspelledNames([given.toUpperCase()], upper);
  return hit ? known[upper.indexOf(hit.meant)] : undefined;
}

/** `; did you mean "acme"?` when `given` is a typo (or another case) of one of `known`, else nothing. */
function didYouMean(given: string, known: readonly string[]): string {
  const meant = meantName(given, known);
  return meant !== undefined ? `; did you mean "${meant}"?` : '';
}

const custom = (path: (string | number)[], message: string): Issue => ({ code: 'custom', path, message, input: undefined });

/** `refOk` tells a `dependsOn` entry that names a workflow at all from one the schema refuses. */
export function crossFileIssues(raw: unknown, refOk: (ref: unknown) => boolean): Issue[] {
  if (raw === null || typeof raw !== 'object') return [];
  const file = raw as Record<string, unknown>;
  return [...tenantIssues(file.tenants), ...workflowIssues(file.tenants, file.workflows, refOk)];
}

function tenantIssues(list: unknown): Issue[] {
  const issues: Issue[] = [];
  const ids = new Set<string>();
  const channels = new Map<string, string>();
  objects(list).forEach((t, i) => {
    const id = text(t?.id);
    if (id !== undefined && ids.has(id)) issues.push(custom(['tenants', i, 'id'], 'duplicate tenant id'));
    if (id !== undefined) ids.add(id);
    const channel = text(t?.channel);
    if (channel === undefined) return;
    const other = channels.get(channel);
    if (other !== undefined) issues.push(custom(['tenants', i, 'channel'], `channel already belongs to tenant "${other}"`));
    channels.set(channel, id ?? `tenants[${i}]`);
  });
  return issues;
}

function workflowIssues(tenantList: unknown, list: unknown, refOk: (ref: unknown) => boolean): Issue[] {
  const issues: Issue[] = [];
  const tenants = objects(tenantList);
  // Every tenant's id readable: only then is a tenant not among them unknown.
  const tenantIds = Array.isArray(tenantList) && tenants.every((t) => text(t?.id) !== undefined) ? new Set(tenants.map((t) => text(t!.id)!)) : undefined;
  const workflows = objects(list);
  const names = new Set<string>();
  const pingKeys = new Map<string, number>();
  workflows.forEach((w, i) => {
    const tenant = text(w?.tenant);
    const name = text(w?.name);
    // Pings find their workflow by key: one key, one workflow.
    const pingKey = text(w?.pingKey);
    const keyedBefore = pingKey === undefined ? undefined : pingKeys.get(pingKey);
    if (keyedBefore !== undefined) issues.push(custom(['workflows', i, 'pingKey'], `ping key already given to workflows[${keyedBefore}]; each workflow needs its own`));
    if (pingKey !== undefined && keyedBefore === undefined) pingKeys.set(pingKey, i);
    if (tenant !== undefined && tenantIds && !tenantIds.has(tenant)) issues.push(custom(['workflows', i, 'tenant'], `unknown tenant${didYouMean(tenant, [...tenantIds])}`));
    if (tenant === undefined || name === undefined) return;
    const key = `${tenant}/${name}`;
    if (names.has(key)) issues.push(custom(['workflows', i, 'name'], `duplicate workflow name in tenant "${tenant}"`));
    names.add(key);
  });
  const allNamed = Array.isArray(list) && workflows.every((w) => text(w?.tenant) !== undefined && text(w?.name) !== undefined);
  const nodes = workflows.map((w) => ({
    tenant: text(w?.tenant) ?? '',
    name: text(w?.name) ?? '',
    dependsOn: Array.isArray(w?.dependsOn) ? w.dependsOn.map((r) => (refOk(r) ? (r as string) : '')) : [],
  }));
  for (const p of dependencyProblems(nodes)) {
    if (p.message === 'no such workflow' && !allNamed) continue;
    const hint = p.message === 'no such workflow' ? didYouMean(nodes[p.node]!.dependsOn[p.dep]!, nodes.filter((_, i) => i !== p.node).map((n) => dependencyRefText(n, nodes[p.node]!.tenant))) : '';
    issues.push(custom(['workflows', p.node, 'dependsOn', p.dep], `${p.message}${hint}`));
  }
  return issues;
}

