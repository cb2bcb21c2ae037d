/**
 * Shadow mode (docs/policies.md): a workflow is in shadow when its own flag
 * or its tenant's is set. Its alerts are evaluated and recorded as usual and
 * told only to the audit destination (the platform channel): nothing a
 * tenant's people read (its channel, its destinations, its digest, a live
 * thread) says anything of them.
 */
export function inShadow(flags: { workflowShadow: boolean; tenantShadow: boolean }): boolean {
  return flags.workflowShadow || flags.tenantShadow;
}

/** `inShadow` as a condition on `workflows w` joined with `tenants t`. */
export const IN_SHADOW_SQL = '(w.shadow or t.shadow)';
