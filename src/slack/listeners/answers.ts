import { randomBytes } from 'node:crypto';
import { databaseRefusalOf, isDatabaseFault } from '../../db/connection-errors.js';
import type { Logger } from '../../log.js';
import { refusalText } from '../../domain/database-refusal.js';
import type { ActionResult } from '../../ledger/alert-actions.js';
import type { RunNowResult } from '../../services/run-now.js';
import { slackDate, userMention } from '../blocks/format.js';
import { escapeMrkdwn } from '../blocks/limits.js';

/** Service outcomes as words for the person who asked. Success needs none: the thread shows it. */

export const NOT_FOUND_TEXT = "I can't find that alert here. Alerts can only be changed from their tenant's channel, the platform channel or the App Home.";

export function actionRefusal(result: ActionResult | { kind: 'invalid'; reason: string }): string | undefined {
  switch (result.kind) {
    case 'ok':
      return undefined;
    case 'not_found':
      return NOT_FOUND_TEXT;
    case 'not_open':
      return 'This alert is already resolved; nothing to change.';
    case 'already_owned':
      return `${userMention(result.by)} already owns this alert. Ask them to hand it over, or an admin of this tenant can give it to you with *Reassign…* (or \`/scheduler reassign\`).`;
    case 'unchanged': {
      const { ownerTeam, ownerUser, ownerNote } = result.alert;
      const who = ownerUser ? `*${escapeMrkdwn(ownerTeam)}* (${userMention(ownerUser)})` : `the *${escapeMrkdwn(ownerTeam)}* team with no one named`;
      return `The alert is already with ${who}${ownerNote ? ' and has that note' : ' with no note'}; nothing changed.`;
    }
    case 'already_silenced':
      return `${userMention(result.by)} already silenced this alert ${result.until === 'resolved' ? 'until it resolves' : `until ${slackDate(result.until)}`}. Use *Unsilence* first to silence it for another time.`;
    case 'invalid':
      return escapeMrkdwn(result.reason);
  }
}

/** A run started on a paused workflow is a one-off: said so, so nobody takes it for a resume. */
export function pausedNote(escapedName: string): string {
  return `*${escapedName}* is paused: this run is a one-off, and its schedule stays paused until \`/scheduler resume ${escapedName}\`.`;
}

/**
 * Run now's answer. A start an open alert's thread tells ("@x started run #N") answers the asker
 * alone; one that no thread the channel sees tells (no alert open, or one in shadow) changed state
 * for everyone, so it is said in the channel, naming who started it (DESIGN.md, `/scheduler`).
 */
export function runNowText(result: RunNowResult, workflowName: string, asker: { user: string; seesThread: boolean }): { text: string; public: boolean } {
  const name = escapeMrkdwn(workflowName);
  switch (result.kind) {
    case 'started': {
      const paused = result.paused ? ` ${pausedNote(name)}` : '';
      if (result.toldInThread && asker.seesThread) return { text: `Run #${result.run.id} of *${name}* started. The open alert shows who started it and how it ends.${paused}`, public: false };
      return { text: `${userMention(asker.user)} started run #${result.run.id} of *${name}*. \`/scheduler history ${name}\` shows how it ends.${paused}`, public: true };
    }
    case 'no_launcher':
      return { text: `*${name}* has no launcher, so I can't start it: it runs on an outside scheduler that reports in. Re-run it there.`, public: false };
    case 'already_running':
      return { text: `*${name}* is already running (run #${result.run.id}); wait for it to finish.`, public: false };
    case 'not_found':
      return { text: NOT_FOUND_TEXT, public: false };
  }
}

/**
 * A click or command the database could not record (away, read-only, full,
 * a row locked elsewhere): nothing changed, and the person is told so
 * rather than left with a button that seemed to do nothing.
 */
export function databaseFaultText(error: unknown): string {
  const refusal = databaseRefusalOf(error);
  return `I couldn't record that: ${refusal ? refusalText(refusal) : 'the database is not answering'}. Nothing changed; try again in a minute.`;
}

/**
 * What a person who typed a command, clicked or submitted a modal is told when answering it
 * failed: the database's fault in words (nothing changed), or, for anything
 * else (a bug), a reference to the log line that has the error, never the
 * error itself (it may name tables, hosts or a tenant's data). Before, such
 * an error went to Bolt's log and the person heard nothing.
 */
export function failureAnswer(log: Logger, error: unknown, what: 'command' | 'click' | 'submission'): string {
  if (isDatabaseFault(error)) {
    log.warn({ error: (error as Error).message, refusal: databaseRefusalOf(error) }, `${what} not recorded: the database failed`);
    return databaseFaultText(error);
  }
  const reference = randomBytes(4).toString('hex');
  log.error({ err: error, reference }, `${what} failed unexpectedly`);
  return `Something went wrong on my side answering that (reference \`${reference}\`, in the bot's log for the operator). It may not have been applied: check \`/scheduler status\` before trying again.`;
}
