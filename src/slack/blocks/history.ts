import { compactDuration } from '../../domain/durations.js';
import { cutText } from '../../domain/text.js';
import { slackDate } from './format.js';
import { capBlocks, codeSpan, lineSections, LIMITS, mrkdwn, omittedNote, safeText, withItems } from './limits.js';
import type { Block, SlackMessage } from './types.js';

/** One tick (or manual run) as the history shows it: its verdict and how many attempts it took. */
export interface HistoryRow {
  runId: number;
  tick: Date | null;
  trigger: string;
  status: string;
  attempts: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  error: string | null;
  outcomeNote: string | null;
}

const STATUS_ICON: Record<string, string> = {
  succeeded: ':white_check_mark:',
  failed: ':x:',
  missed: ':ghost:',
  running: ':hourglass_flowing_sand:',
  pending_retry: ':repeat:',
  skipped: ':fast_forward:',
};

export function historyLine(r: HistoryRow): string {
  const when = r.tick ?? r.startedAt;
  const took = r.startedAt && r.finishedAt ? ` in ${compactDuration(r.finishedAt.getTime() - r.startedAt.getTime())}` : '';
  const attempts = r.attempts > 1 ? `, ${r.attempts} attempts` : '';
  const note = r.outcomeNote ? ` (${safeText(r.outcomeNote, 200)})` : '';
  const error = r.error ? `\n      ${codeSpan(r.error, 300)}` : '';
  return `${STATUS_ICON[r.status] ?? '•'} #${r.runId} ${when ? slackDate(when) : '(no tick)'} ${r.trigger === 'schedule' ? '' : `[${safeText(r.trigger, 20)}] `}*${safeText(r.status, 20)}*${took}${attempts}${note}${error}`;
}

/** The ephemeral History answer: the last ticks of one workflow, newest first. */
export function renderHistory(workflowName: string, rows: HistoryRow[]): SlackMessage {
  const title = `History of ${workflowName}: last ${rows.length} run${rows.length === 1 ? '' : 's'}`;
  const blocks: Block[] = [withItems({ type: 'section', text: mrkdwn(`*${safeText(title, 300)}*`) }, 0)];
  if (rows.length === 0) blocks.push({ type: 'section', text: mrkdwn('No runs recorded yet.') });
  // Several lines per section keep long histories inside the 50-block budget.
  blocks.push(...lineSections(rows.map(historyLine), 5));
  const text = `${title}\n${rows.map((r) => `#${r.runId} ${r.status}${r.error ? `: ${cutText(r.error, 100)}` : ''}`).join('\n')}`;
  return { text: safeText(text, LIMITS.fallbackText), blocks: capBlocks(blocks, LIMITS.messageBlocks, omittedNote) };
}
