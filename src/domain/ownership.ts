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

/**
 * What an `owner_changed` event did: take, release or reassign, from the
 * event's own `action` when it has one, else from what changed. A take (a
 * person making the alert theirs) is what acknowledges it (PagerDuty's
 * `acknowledge`); a reassignment, even to a named person, is not.
 */
export function ownerChange(event: { actor: string | null; data: unknown }): 'take' | 'release' | 'reassign' {
  const d = (event.data ?? {}) as Record<string, unknown>;
  const str = (k: string): string | undefined => (typeof d[k] === 'string' && d[k] !== '' ? (d[k] as string) : undefined);
  const action = str('action');
  if (action === 'take' || action === 'release' || action === 'reassign') return action;
  const fromTeam = str('fromTeam');
  const toTeam = str('toTeam');
  const sameTeam = !fromTeam || !toTeam || fromTeam === toTeam;
  const fromUser = str('fromUser');
  const toUser = str('toUser');
  if (sameTeam && toUser && toUser === event.actor && fromUser !== toUser && d.note == null) return 'take';
  if (sameTeam && !toUser && fromUser && fromUser === event.actor) return 'release';
  return 'reassign';
}
