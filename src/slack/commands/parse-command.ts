import { parseDuration } from '../blocks/format.js';
import { USAGE } from '../blocks/help.js';

/** `/scheduler …` text → what to do, or the usage line for what went wrong. Pure. */
export type SchedulerCommand =
  | { kind: 'help' | 'mine' | 'oncall' }
  | { kind: 'status'; workflow?: string }
  | { kind: 'run' | 'ack' | 'release' | 'unsilence' | 'history'; workflow: string }
  /** durationMs null: until the alert resolves. */
  | { kind: 'silence'; workflow: string; durationMs: number | null; reason?: string }
  | { kind: 'reassign'; workflow: string; user: string; note?: string }
  | { kind: 'resolve'; workflow: string; note: string }
  | { kind: 'usage'; message: string };

/** `<@U123>`, `<@U123|alice>` (the command is escaped, see manifest.json) or a bare `U123`. */
function userId(word: string): string | undefined {
  const m = /^<@([UW][A-Z0-9]{2,})(?:\|[^>]*)?>$/.exec(word) ?? /^([UW][A-Z0-9]{2,})$/.exec(word);
  return m?.[1];
}

export function parseSchedulerCommand(text: string): SchedulerCommand {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const [sub, ...rest] = words;
  const usage = (name: string, problem?: string): SchedulerCommand => ({ kind: 'usage', message: `${problem ? `${problem}\n` : ''}Usage: \`${USAGE[name]}\`` });
  switch (sub?.toLowerCase()) {
    case undefined:
    case 'help':
      return { kind: 'help' };
    case 'mine':
    case 'oncall': {
      const kind = sub.toLowerCase() as 'mine' | 'oncall';
      return rest.length ? usage(kind) : { kind };
    }
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
      const untilResolved = /^until[-_ ]?resolved$/i.test(rest[1]!);
      const durationMs = untilResolved ? null : parseDuration(rest[1]!);
      if (durationMs === undefined) return usage('silence', `"${rest[1]}" is not a duration; use something like 30m, 4h, 1d or until-resolved.`);
      const reason = rest.slice(2).join(' ') || undefined;
      return { kind: 'silence', workflow: rest[0]!, durationMs, ...(reason ? { reason } : {}) };
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
      return { kind: 'usage', message: `Unknown subcommand "${sub}". Try \`/scheduler help\`.` };
  }
}
