import { readDuration } from '../../domain/durations.js';
import { USAGE } from '../blocks/help.js';

/** `/scheduler …` text → what to do, or the usage line for what went wrong. Pure. */
export type SchedulerCommand =
  | { kind: 'help' }
  | { kind: 'status'; workflow?: string }
  | { kind: 'run' | 'ack' | 'unsilence' | 'history'; workflow: string }
  | { kind: 'silence'; workflow: string; durationMs: number; reason?: string }
  | { kind: 'usage'; message: string };

export function parseSchedulerCommand(text: string): SchedulerCommand {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const [sub, ...rest] = words;
  const usage = (name: string, problem?: string): SchedulerCommand => ({ kind: 'usage', message: `${problem ? `${problem}\n` : ''}Usage: \`${USAGE[name]}\`` });
  switch (sub?.toLowerCase()) {
    case undefined:
    case 'help':
      return { kind: 'help' };
    case 'status':
      if (rest.length > 1) return usage('status');
      return rest[0] ? { kind: 'status', workflow: rest[0] } : { kind: 'status' };
    case 'run':
    case 'ack':
    case 'unsilence':
    case 'history': {
      const kind = sub.toLowerCase() as 'run' | 'ack' | 'unsilence' | 'history';
      if (rest.length !== 1) return usage(kind);
      return { kind, workflow: rest[0]! };
    }
    case 'silence': {
      if (rest.length < 2) return usage('silence');
      const duration = readDuration(rest[1]!);
      if (!duration.ok) return usage('silence', `${duration.reason}.`);
      const durationMs = duration.ms;
      const reason = rest.slice(2).join(' ') || undefined;
      return { kind: 'silence', workflow: rest[0]!, durationMs, ...(reason ? { reason } : {}) };
    }
    default:
      return { kind: 'usage', message: `Unknown subcommand "${sub}". Try \`/scheduler help\`.` };
  }
}
