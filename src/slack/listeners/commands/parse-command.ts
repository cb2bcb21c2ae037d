import { readDuration } from '../../../domain/durations.js';
import { USAGE, usageCode } from '../../blocks/help.js';
import { escapeMrkdwn } from '../../blocks/limits.js';

const MAX_MAINTENANCE_MS = 7 * 86_400_000;

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

export function parseSchedulerCommand(text: string): SchedulerCommand {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const [sub, ...rest] = words;
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
      const reason = rest.slice(twoWords ? 3 : 2).join(' ') || undefined;
      return { kind: 'silence', workflow: rest[0]!, durationMs, ...(reason ? { reason } : {}) };
    }
    case 'pause': {
      if (rest.length < 1) return usage('pause');
      const reason = rest.slice(1).join(' ') || undefined;
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
      if (durationMs > MAX_MAINTENANCE_MS) return usage('maintenance', 'A maintenance window lasts at most 7d; pause the workflow instead.');
      return { kind: 'maintenance', target: rest[0]!, durationMs, reason: rest.slice(2).join(' ') };
    }
    case 'reassign': {
      if (rest.length < 2) return usage('reassign');
      const user = userId(rest[1]!);
      if (!user) return usage('reassign', `"${rest[1]}" is not a person; mention them, like @alice.`);
      const note = rest.slice(2).join(' ') || undefined;
      return { kind: 'reassign', workflow: rest[0]!, user, ...(note ? { note } : {}) };
    }
    case 'resolve': {
      if (rest.length < 2) return usage('resolve', rest.length === 1 ? 'Say why: a note is required to resolve by hand.' : undefined);
      return { kind: 'resolve', workflow: rest[0]!, note: text.trim().split(/\s+/).slice(2).join(' ') };
    }
    default:
      return { kind: 'usage', message: `Unknown subcommand "${escapeMrkdwn(sub.slice(0, 40))}". Try \`/scheduler help\`.` };
  }
}
