/** Who an alert is with: its owner team, the person named (if any) and the handoff note. */
export interface Ownership {
  team: string;
  user: string | null;
  note: string | null;
}

export type ReassignDecision =
  | { kind: 'invalid'; reason: string }
  /** The request names the ownership the alert already has: nothing to record, nothing to post. */
  | { kind: 'unchanged'; owner: Ownership }
  | { kind: 'change'; to: Ownership };

/**
 * What a reassign (the Reassign… form, `/scheduler reassign`, a replayed
 * action) asks for, compared with what the alert has. Person and note are
 * compared trimmed, an empty one as none. A request naming the same team,
 * person and note changes nothing: no `owner_changed` event ("reassigned
 * from @bob to @bob"), and the acknowledged time (which the reminder and
 * ownership-expiry clocks count from) is kept.
 */
export function decideReassign(
  current: { ownerTeam: string; ownerUser: string | null; ownerNote: string | null },
  request: { team: string; user?: string | null; note?: string | null },
): ReassignDecision {
  const { team } = request;
  if (team !== 'engineering' && team !== 'customer') return { kind: 'invalid', reason: `team must be "engineering" or "customer", got ${JSON.stringify(team)}` };
  const note = request.note?.trim() || null;
  if (team === 'customer' && !note) return { kind: 'invalid', reason: 'a note is required when handing an alert to the customer' };
  const to: Ownership = { team, user: request.user?.trim() || null, note };
  const same = current.ownerTeam === to.team && (current.ownerUser?.trim() || null) === to.user && (current.ownerNote?.trim() || null) === to.note;
  return same ? { kind: 'unchanged', owner: to } : { kind: 'change', to };
}
