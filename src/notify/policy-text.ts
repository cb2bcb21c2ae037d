/**
 * Sentences for the policy events (issue 17), shared by every destination.
 * Read defensively: event data is stored JSON.
 */
type Data = Record<string, unknown>;

const FIELD_WORDS: Record<string, string> = {
  retries: 'retries per tick',
  alertAfter: 'failures before alerting',
  firstSeverity: 'first severity',
  escalationMultiplier: 'escalation multiplier',
  recoverAfter: 'successes to resolve',
  graceSeconds: 'grace (s)',
  timeoutSeconds: 'timeout (s)',
  minRows: 'minimum rows',
  cadenceSeconds: 'cadence (s)',
  escalateAfterFailures: 'failures before escalating',
};

export function policyChangedSentence(d: Data): string {
  const changes = Array.isArray(d.changes) ? (d.changes as { field?: unknown; from?: unknown; to?: unknown }[]) : [];
  const list = changes
    .filter((c) => typeof c.field === 'string')
    .map((c) => `${FIELD_WORDS[c.field as string] ?? String(c.field)} ${String(c.from ?? 'none')} → ${String(c.to ?? 'none')}`)
    .join(', ');
  const versions = typeof d.from === 'number' && typeof d.to === 'number' ? ` (v${d.from} → v${d.to})` : '';
  return `Policy changed${versions}${list ? `: ${list}` : ''}. This alert continues under the new rules.`;
}

export function wentLiveSentence(): string {
  return 'Shadow mode ended: this alert is now told to its channel and destinations, from its current state.';
}
