import type { Deps } from '../../deps.js';
import type { LoopSpec } from '../../engine/runner.js';
import { OTHER_TENANT_WORKFLOW } from '../../domain/dependencies.js';
import { plural } from '../../domain/durations.js';
import { claimHeldBackNote, unclaimHeldBackNote, type HeldBackNote } from '../../ledger/held-back-notes.js';
import { slackDate } from '../blocks/format.js';
import { escapeMrkdwn, mrkdwn } from '../blocks/limits.js';
import { alertMetadata } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';

/**
 * Downstreams held back by another tenant's upstream incident, told in their
 * own tenant's channel (src/ledger/held-back-notes.ts, docs/alerts.md): one
 * top-level message when they are first held back, naming those held back
 * at once, one when the incident ends.
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
    const first = note.workflows[0]!;
    const posted = await api.postMessage({
      channel,
      text,
      blocks: [{ type: 'section', text: mrkdwn(text) }],
      // No alert of this tenant's, and the upstream's is another tenant's: the message names the downstream only.
      metadata: alertMetadata({ alertId: 0, tenant: note.tenantId, workflow: first.name, event: `upstream_${note.kind}`, severity: 'warning', key: `held-back:${first.workflowId}:${first.since.getTime()}:${note.kind}` }),
    });
    if (!posted.ok) {
      log.warn({ workflowIds: note.workflows.map((w) => w.workflowId), kind: note.kind, error: posted.error, errorKind: posted.kind }, 'held-back note not posted');
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

/** Names listed in one note; the rest are counted. */
const NAMES_SHOWN = 10;

/** The note's words: the downstreams' own names and counts; the upstream only as another tenant's workflow. */
export function heldBackText(note: Pick<HeldBackNote, 'kind' | 'workflows'>): string {
  const ws = note.workflows;
  const one = ws.length === 1;
  const names = ws.slice(0, NAMES_SHOWN).map((w) => `*${escapeMrkdwn(w.name)}*`);
  if (ws.length > NAMES_SHOWN) names.push(`${ws.length - NAMES_SHOWN} more`);
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
  if (note.kind === 'held') {
    const since = new Date(Math.min(...ws.map((w) => w.since.getTime())));
    return (
      `${list} ${one ? 'is' : 'are'} held back since ${slackDate(since)}: an upstream ${one ? 'it depends' : 'they depend'} on (${OTHER_TENANT_WORKFLOW}) is failing, ` +
      `so ${one ? 'its' : 'their'} failures open no alert here for now. You will hear here when that incident ends; if ${one ? list : 'one of them'} still fails afterwards, it alerts here as usual.`
    );
  }
  const failures = ws.reduce((n, w) => n + w.failures, 0);
  const missed = ws.reduce((n, w) => n + w.missed, 0);
  const counts = [plural(failures, 'failure'), ...(missed ? [plural(missed, 'missed tick')] : [])].join(' and ');
  return `${list} ${one ? 'is' : 'are'} no longer held back: the upstream incident (${OTHER_TENANT_WORKFLOW}) has ended. Held back meanwhile: ${counts}. From now on ${one ? 'its' : 'their'} failures count here as usual.`;
}
