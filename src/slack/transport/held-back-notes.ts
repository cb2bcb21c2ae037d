import type { Deps } from '../../deps.js';
import type { LoopSpec } from '../../engine/runner.js';
import { OTHER_TENANT_WORKFLOW } from '../../domain/dependencies.js';
import { claimHeldBackNote, unclaimHeldBackNote, type HeldBackNote } from '../../ledger/held-back-notes.js';
import { slackDate } from '../blocks/format.js';
import { escapeMrkdwn, mrkdwn } from '../blocks/limits.js';
import { alertMetadata } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';

/**
 * A downstream held back by another tenant's upstream incident, told in its
 * own tenant's channel (src/ledger/held-back-notes.ts, docs/alerts.md): one
 * top-level message when it is first held back, one when the incident ends.
 * A downstream in shadow: to the platform channel, marked Shadow. Like the
 * maintenance notes, a claim is marked before the post; one Slack may take
 * later (rate limited, transient) is given back for the next look, anything
 * else (a refused token, an archived channel) is logged and dropped: it is a
 * courtesy note, the alert rules do not hang on it.
 */
export function createHeldBackNotes(deps: Pick<Deps, 'db' | 'clock' | 'logger'> & { config?: Pick<Deps['config'], 'PLATFORM_CHANNEL'> }, api: SlackOutboxApi) {
  const log = deps.logger.child({ loop: 'slack-held-back-notes' });
  const tick = async (): Promise<boolean> => {
    const note = await claimHeldBackNote(deps.db, deps.clock.now());
    if (!note) return false;
    if (!note.told) return true;
    const channel = note.shadow ? (deps.config?.PLATFORM_CHANNEL ?? null) : note.channel;
    if (!channel) return true;
    const text = `${note.shadow ? 'Shadow · ' : ''}${heldBackText(note)}`;
    const posted = await api.postMessage({
      channel,
      text,
      blocks: [{ type: 'section', text: mrkdwn(text) }],
      // No alert of this tenant's, and the upstream's is another tenant's: the message names the downstream only.
      metadata: alertMetadata({ alertId: 0, tenant: note.tenantId, workflow: note.workflow, event: `upstream_${note.kind}`, severity: 'warning', key: `held-back:${note.workflowId}:${note.since.getTime()}:${note.kind}` }),
    });
    if (!posted.ok) {
      log.warn({ workflowId: note.workflowId, kind: note.kind, error: posted.error, errorKind: posted.kind }, 'held-back note not posted');
      // Given back, and nothing more this tick: the next look (an interval later) tries again, rather than at once.
      if (posted.kind === 'rate_limited' || posted.kind === 'transient') {
        await unclaimHeldBackNote(deps.db, note);
        return false;
      }
    }
    return true;
  };
  const loop: LoopSpec = { name: 'slack-held-back-notes', intervalMs: 5_000, tick, wakeOn: [] };
  return { tick, loop };
}

/** The note's words: the downstream's own name and counts; the upstream only as another tenant's workflow. */
export function heldBackText(note: Pick<HeldBackNote, 'kind' | 'workflow' | 'since' | 'failures' | 'missed'>): string {
  const name = `*${escapeMrkdwn(note.workflow)}*`;
  if (note.kind === 'held') {
    return (
      `${name} is held back since ${slackDate(note.since)}: an upstream it depends on (${OTHER_TENANT_WORKFLOW}) is failing, ` +
      `so its failures open no alert here for now. You will hear here when that incident ends; if ${name} still fails afterwards, it alerts here as usual.`
    );
  }
  const counts = [plural(note.failures, 'failure'), ...(note.missed ? [plural(note.missed, 'missed tick')] : [])].join(' and ');
  return `${name} is no longer held back: the upstream incident (${OTHER_TENANT_WORKFLOW}) has ended. Held back meanwhile: ${counts}. From now on its failures count here as usual.`;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
