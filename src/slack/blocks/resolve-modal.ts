import { RESOLVE_NOTE_MAX } from '../../ledger/alert-actions.js';
import { RESOLVE_FIELD, VIEW } from './ids.js';
import { LIMITS, mrkdwn, plain, safeText } from './limits.js';
import type { Block } from './types.js';

export interface ResolveModalInput {
  alertId: number;
  workflowName: string;
  tenantName: string;
  /** Where the button was clicked: the scope of the submission, and the root to update at once. */
  channel: string;
  messageTs: string | null;
}

/** private_metadata of the modal: what the submission needs and cannot trust the form for. */
export function resolveMetadata(input: Pick<ResolveModalInput, 'alertId' | 'channel' | 'messageTs'>): string {
  return JSON.stringify({ alertId: input.alertId, channel: input.channel, messageTs: input.messageTs });
}

/** Resolve by hand: the note is required (it is posted in the thread with who resolved it). */
export function renderResolveModal(input: ResolveModalInput): Record<string, unknown> {
  const blocks: Block[] = [
    {
      type: 'section',
      text: mrkdwn(
        `Close the alert on *${safeText(input.workflowName, 200)}* (${safeText(input.tenantName, 200)}) by hand. Say why: the note is posted in the thread. Its failures are counted again from now, as after a recovery: a new alert opens when they reach its threshold.`,
      ),
    },
    {
      type: 'input',
      block_id: RESOLVE_FIELD.note.block,
      label: plain('Why can it be closed?', 50),
      element: { type: 'plain_text_input', action_id: RESOLVE_FIELD.note.action, multiline: true, max_length: RESOLVE_NOTE_MAX },
    },
  ];
  return {
    type: 'modal',
    callback_id: VIEW.resolve,
    private_metadata: resolveMetadata(input),
    title: plain('Resolve alert', LIMITS.modalTitle),
    submit: plain('Resolve', LIMITS.modalTitle),
    close: plain('Cancel', LIMITS.modalTitle),
    blocks,
  };
}
