/**
 * Workflow dependencies (issue 16), the rules in one place:
 * - how a `dependsOn` entry names a workflow (same tenant by name, another
 *   tenant's by `tenant/name`) and which entries a list may hold (no unknown
 *   names, no cycles);
 * - which open upstream incident a downstream failure is told in instead of
 *   opening an alert of its own, and what that does to the downstream's own
 *   evaluation.
 * Pure: values in, values out.
 */

export interface WorkflowKey {
  tenant: string;
  name: string;
}

/** `name` (the workflow's own tenant) or `tenant/name`. Workflow names hold no slash, tenant ids neither. */
export function parseDependencyRef(ref: string, ownTenant: string): WorkflowKey {
  const slash = ref.indexOf('/');
  return slash < 0 ? { tenant: ownTenant, name: ref } : { tenant: ref.slice(0, slash), name: ref.slice(slash + 1) };
}

/** How a workflow is written from where `fromTenant` stands: its name when in the same tenant, else tenant/name. */
export function dependencyRefText(key: WorkflowKey, fromTenant: string): string {
  return key.tenant === fromTenant ? key.name : `${key.tenant}/${key.name}`;
}

const keyText = (k: WorkflowKey) => `${k.tenant}/${k.name}`;

export interface DependencyNode extends WorkflowKey {
  dependsOn: readonly string[];
}

/** One refused entry: `dependsOn[dep]` of `nodes[node]`. */
export interface DependencyProblem {
  node: number;
  dep: number;
  message: string;
}

/** How a cycle names a workflow of another tenant than the one reading it (a tenant token is never told another tenant's names). */
export const OTHER_TENANT_WORKFLOW = "another tenant's workflow";

/**
 * Unknown names and cycles among `nodes` (every workflow the list may name).
 * Each cycle is reported once, on the first of its checked workflows in
 * `nodes` order, spelled out from there: "a → b → a". Entries of `nodes` not
 * in `check` (by index) are context only: their own problems are not
 * reported, but a cycle through a checked one is. `shownTo`: the tenant
 * reading the answer (a tenant token); a cycle through another tenant's
 * workflow (linked by the operator) names it only as `OTHER_TENANT_WORKFLOW`.
 */
export function dependencyProblems(
  nodes: readonly DependencyNode[],
  check: ReadonlySet<number> = new Set(nodes.map((_, i) => i)),
  shownTo?: string,
): DependencyProblem[] {
  const index = new Map(nodes.map((n, i) => [keyText(n), i]));
  const problems: DependencyProblem[] = [];
  const edges = nodes.map((n, i) =>
    n.dependsOn.map((ref, dep) => {
      // An entry that is not a name at all is the schema's to refuse.
      if (ref === '') return undefined;
      const target = index.get(keyText(parseDependencyRef(ref, n.tenant)));
      if (target === undefined && check.has(i)) problems.push({ node: i, dep, message: 'no such workflow' });
      else if (target === i && check.has(i)) problems.push({ node: i, dep, message: `a workflow cannot depend on itself (${n.name} → ${n.name})` });
      return target === i ? undefined : target;
    }),
  );
  const reported = new Set<string>();
  for (const start of check) {
    const path = cycleFrom(start, edges);
    if (!path) continue;
    const members = [...new Set(path)].sort((a, b) => a - b);
    const id = members.join(',');
    if (reported.has(id)) continue;
    reported.add(id);
    const first = members.find((m) => check.has(m))!;
    const from = path.indexOf(first);
    const loop = [...path.slice(from, -1), ...path.slice(0, from), first];
    const dep = edges[first]!.indexOf(loop[1]!);
    const shown = (n: DependencyNode) => (shownTo !== undefined && n.tenant !== shownTo ? OTHER_TENANT_WORKFLOW : dependencyRefText(n, nodes[first]!.tenant));
    const names = loop.map((i) => shown(nodes[i]!)).join(' → ');
    problems.push({ node: first, dep, message: `dependency cycle: ${names}` });
  }
  return problems.sort((a, b) => a.node - b.node || a.dep - b.dep);
}

/** A cycle through `start`, as the node path start → … → start, if there is one. */
function cycleFrom(start: number, edges: readonly (number | undefined)[][]): number[] | null {
  const seen = new Set<number>();
  const walk = (at: number, path: number[]): number[] | null => {
    for (const next of edges[at] ?? []) {
      if (next === undefined) continue;
      if (next === start) return [...path, start];
      if (seen.has(next)) continue;
      seen.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return null;
  };
  return walk(start, [start]);
}

/** An open alert of one of a workflow's upstreams (direct, or through other upstreams). */
export interface UpstreamIncident {
  alertId: number;
  workflowId: number;
  openedAt: Date;
  /** The upstream workflow (or its tenant) is in shadow; absent: live. */
  shadow?: boolean;
}

/**
 * May an upstream incident hold a downstream back (or link its open alert)?
 * Only when both are live or both in shadow. A shadow incident is told only
 * to the audit destination: holding a live downstream back under it would
 * leave the live tenant told nothing of its own failure, and linking a live
 * alert to it would name a shadow thread in a live channel. A shadow
 * downstream held by a live incident would be listed in the live thread
 * ("Also affected: …"), telling the live channel of a shadow workflow; it
 * opens its own shadow alert instead (docs/policies.md, shadow mode).
 */
export function upstreamHolds(upstream: { shadow?: boolean }, downstream: { shadow?: boolean }): boolean {
  return !!upstream.shadow === !!downstream.shadow;
}

/**
 * The incident a downstream failure belongs to: the oldest open alert among
 * its upstreams, direct or transitive (a → b → c: c is blocked by a's
 * incident whether or not b has failed yet). The oldest, because it is the
 * likeliest root; ties by alert id, so every replica picks the same one.
 */
export function blockingIncident(incidents: readonly UpstreamIncident[], downstream: { shadow?: boolean } = {}): UpstreamIncident | null {
  let best: UpstreamIncident | null = null;
  for (const i of incidents) {
    if (!upstreamHolds(i, downstream)) continue;
    if (!best || i.openedAt.getTime() < best.openedAt.getTime() || (i.openedAt.getTime() === best.openedAt.getTime() && i.alertId < best.alertId)) best = i;
  }
  return best;
}

export type DependencyVerdict =
  /** Evaluated as usual: no upstream incident, or the workflow's own alert is already open (it stays). */
  | { kind: 'own' }
  /**
   * Told in the upstream's thread, no alert of its own: `record` when the
   * newest failure is one the block has not counted yet.
   */
  | { kind: 'blocked'; incident: UpstreamIncident; record: boolean };

/**
 * What an upstream incident does to one downstream evaluation. Only a
 * workflow with a confirmed failure since its last success is blocked; a
 * healthy one has nothing to hold back.
 */
export function dependencyVerdict(input: {
  hasOpenAlert: boolean;
  incident: UpstreamIncident | null;
  newestFailureRunId: number | null;
  /** The run the block in that incident last counted, if there is a block. */
  blockLastRunId: number | null;
}): DependencyVerdict {
  if (input.hasOpenAlert || !input.incident || input.newestFailureRunId === null) return { kind: 'own' };
  return { kind: 'blocked', incident: input.incident, record: input.newestFailureRunId !== input.blockLastRunId };
}

/** What an alert's root shows of its dependencies: downstream workflows it holds back; the upstream incident it is linked to. */
export interface AlertDependency {
  affected?: number;
  /** `workflow` null: another tenant's, not named. */
  upstream?: { alertId: number; workflow: string | null; open: boolean };
}
