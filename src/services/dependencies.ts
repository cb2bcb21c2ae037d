import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { dependencyProblems, dependencyRefText, parseDependencyRef, type DependencyNode } from '../domain/dependencies.js';

/** A refused `dependsOn` entry, by its index in the list. */
export interface DependencyIssue {
  dep: number;
  message: string;
}

/** The one answer a tenant token gets for any other tenant's name, whether or not it exists (docs/security.md). */
export const OTHER_TENANT_REFUSED = "a tenant token may depend only on its own tenant's workflows";

/** Makes the stored dependencies of `workflowId` exactly `upstreamIds`. */
export async function replaceDependencies(trx: Transaction<Database>, workflowId: number, upstreamIds: readonly number[]): Promise<void> {
  await trx.deleteFrom('workflowDependencies').where('workflowId', '=', workflowId).execute();
  const unique = [...new Set(upstreamIds)].filter((id) => id !== workflowId);
  if (unique.length) await trx.insertInto('workflowDependencies').values(unique.map((upstreamId) => ({ workflowId, upstreamId }))).execute();
}

/**
 * The file sync: every file workflow's `dependsOn` (already checked against
 * the file itself: every name is in it, no cycles) written by id, where it
 * differs from what is stored. Returns the workflows whose upstreams changed.
 */
export async function syncFileDependencies(trx: Transaction<Database>, workflows: readonly { tenant: string; name: string; dependsOn?: readonly string[] }[]): Promise<Set<number>> {
  const rows = await trx.selectFrom('workflows').select(['id', 'tenantId', 'name']).execute();
  const idOf = new Map(rows.map((r) => [`${r.tenantId}/${r.name}`, r.id]));
  const stored = new Map<number, number[]>();
  for (const e of await trx.selectFrom('workflowDependencies').select(['workflowId', 'upstreamId']).execute()) stored.set(e.workflowId, [...(stored.get(e.workflowId) ?? []), e.upstreamId]);
  const changed = new Set<number>();
  for (const w of workflows) {
    const id = idOf.get(`${w.tenant}/${w.name}`);
    if (id === undefined) continue;
    const upstream = (w.dependsOn ?? []).map((ref) => {
      const key = parseDependencyRef(ref, w.tenant);
      return idOf.get(`${key.tenant}/${key.name}`);
    });
    const next = [...new Set(upstream.filter((u): u is number => u !== undefined && u !== id))].sort((a, b) => a - b);
    const before = [...(stored.get(id) ?? [])].sort((a, b) => a - b);
    if (next.join(',') === before.join(',')) continue;
    await replaceDependencies(trx, id, next);
    changed.add(id);
  }
  return changed;
}

/**
 * Serialises the API's changes to the dependency graph, taken before any
 * workflow row is locked: two replicas adding `a → b` and `b → a` at once
 * would each check a graph without the other's edge and store a cycle (or
 * deadlock on each other's workflow rows).
 */
export async function lockDependencyGraph(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('scheduler-bot:dependencies'))`.execute(trx);
}

/**
 * Resolves an API workflow's `dependsOn` against the enabled workflows in the
 * database, refusing unknown names and cycles (the new list in place of the
 * workflow's current one). `tenantScope`: the caller is that tenant's token,
 * which may name only its own tenant's workflows; any other tenant's name is
 * refused with the same words, so the answer tells nothing of what exists there,
 * and a cycle through one does not name it. The operator's links of this
 * workflow to other tenants' workflows, which such a token is neither shown
 * nor allowed to write, are kept.
 * The caller holds `lockDependencyGraph` when `dependsOn` is not empty.
 */
export async function resolveApiDependencies(
  trx: Transaction<Database>,
  spec: { tenant: string; name: string; dependsOn?: readonly string[] },
  tenantScope: string | undefined,
): Promise<{ ok: true; upstreamIds: number[] } | { ok: false; issues: DependencyIssue[] }> {
  const refs = spec.dependsOn ?? [];
  const kept = tenantScope === undefined ? [] : await otherTenantsUpstreams(trx, spec, tenantScope);
  if (refs.length === 0) return { ok: true, upstreamIds: kept };
  const foreign = refs.flatMap((ref, dep) => (tenantScope !== undefined && parseDependencyRef(ref, spec.tenant).tenant !== tenantScope ? [{ dep, message: OTHER_TENANT_REFUSED }] : []));
  if (foreign.length) return { ok: false, issues: foreign };

  // An edge into this workflow counts even while it is disabled: a PUT that enables it again brings it back.
  const rows = await sql<{ id: number; tenantId: string; name: string; upstream: string[] | null }>`
    select w.id, w.tenant_id, w.name,
      array_agg(u.tenant_id || '/' || u.name) filter (where u.id is not null) as upstream
    from workflows w
    join tenants t on t.id = w.tenant_id and t.enabled
    left join workflow_dependencies d on d.workflow_id = w.id
    left join workflows u on u.id = d.upstream_id and (u.enabled or (u.tenant_id = ${spec.tenant} and u.name = ${spec.name}))
    where w.enabled
    group by w.id
  `.execute(trx);
  const others = rows.rows.filter((r) => !(r.tenantId === spec.tenant && r.name === spec.name));
  const nodes: DependencyNode[] = [
    { tenant: spec.tenant, name: spec.name, dependsOn: refs },
    ...others.map((r) => ({ tenant: r.tenantId, name: r.name, dependsOn: (r.upstream ?? []).map((k) => dependencyRefText(parseDependencyRef(k, ''), r.tenantId)) })),
  ];
  const problems = dependencyProblems(nodes, new Set([0]), tenantScope);
  if (problems.length) return { ok: false, issues: problems.map((p) => ({ dep: p.dep, message: p.message })) };
  const idOf = new Map(others.map((r) => [`${r.tenantId}/${r.name}`, r.id]));
  const named = refs.map((ref) => {
    const key = parseDependencyRef(ref, spec.tenant);
    return idOf.get(`${key.tenant}/${key.name}`)!;
  });
  return { ok: true, upstreamIds: [...named, ...kept] };
}

/** The stored upstreams of the workflow `spec` names that belong to other tenants than `tenant`. */
async function otherTenantsUpstreams(trx: Transaction<Database>, spec: { tenant: string; name: string }, tenant: string): Promise<number[]> {
  const rows = await trx
    .selectFrom('workflowDependencies as d')
    .innerJoin('workflows as w', 'w.id', 'd.workflowId')
    .innerJoin('workflows as u', 'u.id', 'd.upstreamId')
    .select('d.upstreamId')
    .where('w.tenantId', '=', spec.tenant)
    .where('w.name', '=', spec.name)
    .where('u.tenantId', '<>', tenant)
    .execute();
  return rows.map((r) => r.upstreamId);
}

/**
 * A workflow's `dependsOn` as the API shows it to `scope`: names of its own
 * tenant, tenant/name of another's; a tenant token is shown only its own
 * tenant's, and how many others there are (the operator may link tenants;
 * a tenant is not told the other's names).
 */
export async function dependsOnView(db: Kysely<Database>, workflow: { id: number; tenantId: string }, scopeTenant: string | undefined) {
  const rows = await db
    .selectFrom('workflowDependencies as d')
    .innerJoin('workflows as u', 'u.id', 'd.upstreamId')
    .select(['u.tenantId', 'u.name'])
    .where('d.workflowId', '=', workflow.id)
    .orderBy('u.tenantId')
    .orderBy('u.name')
    .execute();
  const visible = rows.filter((r) => scopeTenant === undefined || r.tenantId === scopeTenant);
  return {
    dependsOn: visible.map((r) => dependencyRefText({ tenant: r.tenantId, name: r.name }, workflow.tenantId)),
    ...(visible.length < rows.length ? { dependsOnOtherTenants: rows.length - visible.length } : {}),
  };
}
