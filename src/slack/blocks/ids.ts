/** Action, callback and block ids: the contract between builders and listeners. */
export const ACTION = {
  takeOwnership: 'alert_take_ownership',
  /** Take ownership on a reminder reply (value `<alertId>:<eventId>`): the owner's answer, told in that reply. */
  keepOwnership: 'alert_keep_ownership',
  release: 'alert_release',
  reassign: 'alert_reassign',
  resolve: 'alert_resolve',
  silence: 'alert_silence',
  unsilence: 'alert_unsilence',
  runNow: 'alert_run_now',
  history: 'alert_history',
  /** The overflow menu beside each alert in a storm message; option values are `<alertId>:<verb>[:<choice>]`. */
  stormAlertMenu: 'storm_alert_menu',
} as const;

export const VIEW = {
  reassign: 'alert_reassign_modal',
  resolve: 'alert_resolve_modal',
} as const;

/** Block and action ids inside the reassign modal (state.values[block][action]). */
export const REASSIGN_FIELD = {
  team: { block: 'team', action: 'team' },
  user: { block: 'user', action: 'user' },
  note: { block: 'note', action: 'note' },
} as const;

/** Block and action ids inside the resolve modal. */
export const RESOLVE_FIELD = {
  note: { block: 'resolve_note', action: 'resolve_note' },
} as const;

/** Silence choices on the root's select; the value is `<alertId>:<choice>`. */
export const SILENCE_CHOICES = [
  { choice: '1h', label: '1 hour', ms: 3_600_000 },
  { choice: '4h', label: '4 hours', ms: 4 * 3_600_000 },
  { choice: '24h', label: '24 hours', ms: 24 * 3_600_000 },
  { choice: 'resolved', label: 'Until resolved', ms: null },
] as const;
export type SilenceChoice = (typeof SILENCE_CHOICES)[number]['choice'];

export const METADATA_EVENT_TYPE = 'scheduler_alert_event';

/** A storm message's member sections: `storm:<stormId>:<alertId>` (the click says which storm to re-render). */
export function stormBlockId(stormId: number, alertId: number): string {
  return `storm:${stormId}:${alertId}`;
}
