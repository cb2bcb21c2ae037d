import { readDuration } from '../../../domain/durations.js';
import { USAGE, usageCode } from '../../blocks/help.js';
import { escapeMrkdwn } from '../../blocks/limits.js';
import { MAINTENANCE_MAX_MS } from '../../../domain/maintenance.js';
import { closestNames } from './closest-names.js';


/** `/scheduler …` text → what to do, or the usage line for what went wrong. Pure. */
export type SchedulerCommand =
  | { kind: 'help' | 'mine' | 'oncall' }
  | { kind: 'status'; workflow?: string }
  /** tenant: needed in the platform channel only. */
  | { kind: 'digest'; tenant?: string }
  | { kind: 'run' | 'ack' | 'release' | 'unsilence' | 'history'; workflow: string }
  /** durationMs null: until the alert resolves. */
  | { kind: 'silence'; workflow: string; durationMs: number | null; reason?: string }
  | { kind: 'reassign'; workflow: string; user: string; note?: string }
  | { kind: 'resolve'; workflow: string; note: string }
  | { kind: 'pause'; workflow: string; reason?: string }
  | { kind: 'resume'; workflow: string }
  /** target: a workflow's name, or the tenant's id for a tenant-wide window. */
  | { kind: 'maintenance'; target: string; durationMs: number; reason: string }
  | { kind: 'usage'; message: string };

/** `<@U123>`, `<@U123|alice>` (the command is escaped, see manifest.json) or a bare `U123`. */
function userId(word: string): string | undefined {
  const m = /^<@([UW][A-Z0-9]{2,})(?:\|[^>]*)?>$/.exec(word) ?? /^([UW][A-Z0-9]{2,})$/.exec(word);
  return m?.[1];
}

/**
 * The command's text as typed. Slack sends it escaped (`&`, `<`, `>` as
 * `&amp;`, `&lt;`, `&gt;`: the manifest's should_escape), which would
 * otherwise be shown as `&amp;` once a reason is escaped again for mrkdwn;
 * zero-width characters pasted with a name are dropped. Mentions Slack wrote
 * as `<@U…|name>` stay markup here: `reassign` reads its assignee from them.
 */
function typed(text: string): string {
  return text.replace(/[\u200b-\u200d\u2060\ufeff]/g, '').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** A name may be typed in quotes (straight, curly as Slack's clients autocorrect them, or backticks). */
function unquoted(word: string): string {
  const m = /^(["'`“‘«])(.+)(["'`”’»])$/u.exec(word);
  return m ? m[2]! : word;
}

/**
 * Free text (a reason, a note) as people read it: Slack's markup for a
 * person, channel or link (`<@U1|alice>`, `<#C1|ops>`, `<https://x|x>`)
 * becomes `@alice`, `#ops`, `https://x`, instead of the raw markup it would
 * show once escaped; special mentions (`<!channel>`) stay, and are escaped
 * wherever the text is shown.
 */
function freeText(words: string[]): string | undefined {
  const text = words
    .join(' ')
    .replace(/<@[UW][A-Z0-9]+\|([^<>|]+)>/g, '@$1')
    .replace(/<#C[A-Z0-9]+\|([^<>|]*)>/g, (_m, name: string) => `#${name}`)
    .replace(/<((?:https?|mailto):[^<>|\s]+)(?:\|[^<>]*)?>/g, '$1');
  return text || undefined;
}

export function parseSchedulerCommand(raw: string): SchedulerCommand {
  const text = typed(raw);
  const words = text.trim().split(/\s+/).filter(Boolean);
  const [sub, ...args] = words;
  // The first argument is a workflow's (or tenant's) name wherever one is taken.
  const rest = args.map((w, i) => (i === 0 ? unquoted(w) : w));
  // A problem may quote what was typed (`"<!channel>" is not a duration`): escaped, so the answer cannot mention or link.
  const usage = (name: string, problem?: string): SchedulerCommand => ({ kind: 'usage', message: `${problem ? `${escapeMrkdwn(problem)}\n` : ''}Usage: ${usageCode(USAGE[name]!)}` });
  switch (sub?.toLowerCase()) {
    case undefined:
    case 'help':
      return { kind: 'help' };
    case 'mine':
    case 'oncall': {
      const kind = sub.toLowerCase() as 'mine' | 'oncall';
      return rest.length ? usage(kind) : { kind };
    }
    case 'digest':
      if (rest.length > 1) return usage('digest');
      return rest[0] ? { kind: 'digest', tenant: rest[0] } : { kind: 'digest' };
    case 'status':
      if (rest.length > 1) return usage('status');
      return rest[0] ? { kind: 'status', workflow: rest[0] } : { kind: 'status' };
    case 'run':
    case 'ack':
    case 'release':
    case 'unsilence':
    case 'history': {
      const kind = sub.toLowerCase() as 'run' | 'ack' | 'release' | 'unsilence' | 'history';
      if (rest.length !== 1) return usage(kind);
      return { kind, workflow: rest[0]! };
    }
    case 'silence': {
      if (rest.length < 2) return usage('silence');
      // "until-resolved", "until_resolved", "untilresolved", or the two words "until resolved".
      const twoWords = /^until$/i.test(rest[1]!) && /^resolved$/i.test(rest[2] ?? '');
      const untilResolved = twoWords || /^until[-_]?resolved$/i.test(rest[1]!);
      const duration = untilResolved ? undefined : readDuration(rest[1]!);
      if (duration && !duration.ok) return usage('silence', `${duration.reason}; or say until-resolved.`);
      const durationMs = duration?.ok ? duration.ms : null;
      const reason = freeText(rest.slice(twoWords ? 3 : 2));
      return { kind: 'silence', workflow: rest[0]!, durationMs, ...(reason ? { reason } : {}) };
    }
    case 'pause': {
      if (rest.length < 1) return usage('pause');
      const reason = freeText(rest.slice(1));
      return { kind: 'pause', workflow: rest[0]!, ...(reason ? { reason } : {}) };
    }
    case 'resume':
      if (rest.length !== 1) return usage('resume');
      return { kind: 'resume', workflow: rest[0]! };
    case 'maintenance': {
      if (rest.length < 3) return usage('maintenance', rest.length === 2 ? 'A maintenance window needs a reason.' : undefined);
      const reading = readDuration(rest[1]!);
      if (!reading.ok) return usage('maintenance', reading.reason);
      const durationMs = reading.ms;
      if (durationMs > MAINTENANCE_MAX_MS) return usage('maintenance', 'A maintenance window lasts at most 7d; pause the workflow instead.');
      return { kind: 'maintenance', target: rest[0]!, durationMs, reason: freeText(rest.slice(2))! };
    }
    case 'reassign': {
      if (rest.length < 2) return usage('reassign');
      const user = userId(rest[1]!);
      if (!user) return usage('reassign', `"${rest[1]}" is not a person; mention them, like @alice.`);
      const note = freeText(rest.slice(2));
      return { kind: 'reassign', workflow: rest[0]!, user, ...(note ? { note } : {}) };
    }
    case 'resolve': {
      if (rest.length < 2) return usage('resolve', rest.length === 1 ? 'Say why: a note is required to resolve by hand.' : undefined);
      return { kind: 'resolve', workflow: rest[0]!, note: freeText(rest.slice(1))! };
    }
    default:
      return { kind: 'usage', message: unknownSubcommand(sub) };
  }
}

/** The words people reach for that another tool (or habit) uses: each names the subcommand that does it. */
const SAID_ELSEWHERE: Record<string, string> = {
  take: 'ack', own: 'ack', owner: 'ack', claim: 'ack', acknowledge: 'ack',
  snooze: 'silence', mute: 'silence', unmute: 'unsilence', unsnooze: 'unsilence',
  list: 'status', ls: 'status', show: 'status', trigger: 'run', start: 'run', rerun: 'run',
  log: 'history', logs: 'history', close: 'resolve', unpause: 'resume', assign: 'reassign', handoff: 'reassign',
  maint: 'maintenance', 'on-call': 'oncall', who: 'oncall',
};

/** An unknown subcommand is answered with the ones it most likely meant (a typo, or another tool's word), never acted on. */
function unknownSubcommand(sub: string): string {
  const word = sub.toLowerCase();
  const meant = SAID_ELSEWHERE[word] ? [SAID_ELSEWHERE[word]] : closestNames(word, Object.keys(USAGE), 2);
  const hint = meant.length ? `Did you mean ${meant.map((m) => usageCode(USAGE[m]!)).join(' or ')}?` : 'Try `/scheduler help`.';
  return `Unknown subcommand "${escapeMrkdwn(sub.slice(0, 40))}". ${hint}`;
}
