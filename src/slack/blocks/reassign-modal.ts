import { REASSIGN_FIELD, VIEW } from './ids.js';
import { LIMITS, mrkdwn, plain, safeText } from './limits.js';
import type { Block } from './types.js';

export interface ReassignModalInput {
  alertId: number;
  workflowName: string;
  tenantName: string;
  ownerTeam: string;
  ownerUser: string | null;
  /** The current note, shown in the form so that submitting it untouched keeps it (and changes nothing). */
  ownerNote?: string | null;
  /** Where the button was clicked: the scope of the submission, and where the answer goes. */
  channel: string;
  /** The root clicked, re-rendered at once when the submission changes the owner. */
  messageTs: string | null;
}

const NOTE_MAX = 2000;

/** private_metadata of the modal: what the submission needs and cannot trust the form for. */
export function reassignMetadata(input: Pick<ReassignModalInput, 'alertId' | 'channel' | 'messageTs'>): string {
  return JSON.stringify({ alertId: input.alertId, channel: input.channel, messageTs: input.messageTs });
}

export function renderReassignModal(input: ReassignModalInput): Record<string, unknown> {
  const teamOption = (team: string) => ({ text: plain(team === 'engineering' ? 'Engineering' : 'Customer', LIMITS.optionText), value: team });
  const blocks: Block[] = [
    {
      type: 'section',
      text: mrkdwn(`Hand *${safeText(input.workflowName, 200)}* (${safeText(input.tenantName, 200)}) to another team or person. A note is required when handing it to the customer.`),
    },
    {
      type: 'input',
      block_id: REASSIGN_FIELD.team.block,
      label: plain('Team', 50),
      element: {
        type: 'static_select',
        action_id: REASSIGN_FIELD.team.action,
        options: ['engineering', 'customer'].map(teamOption),
        initial_option: teamOption(input.ownerTeam === 'customer' ? 'customer' : 'engineering'),
      },
    },
    {
      type: 'input',
      block_id: REASSIGN_FIELD.user.block,
      optional: true,
      label: plain('Person', 50),
      element: { type: 'users_select', action_id: REASSIGN_FIELD.user.action, ...(input.ownerUser ? { initial_user: input.ownerUser } : {}) },
    },
    {
      type: 'input',
      block_id: REASSIGN_FIELD.note.block,
      optional: true,
      label: plain('Note', 50),
      element: {
        type: 'plain_text_input',
        action_id: REASSIGN_FIELD.note.action,
        multiline: true,
        max_length: NOTE_MAX,
        ...(input.ownerNote ? { initial_value: input.ownerNote.slice(0, NOTE_MAX) } : {}),
      },
    },
  ];
  return {
    type: 'modal',
    callback_id: VIEW.reassign,
    private_metadata: reassignMetadata(input),
    title: plain('Reassign alert', LIMITS.modalTitle),
    submit: plain('Reassign', LIMITS.modalTitle),
    close: plain('Cancel', LIMITS.modalTitle),
    blocks,
  };
}
