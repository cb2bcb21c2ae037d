import { plural } from '../../domain/durations.js';
import type { EventText, EventTextInput, TextPart } from '../event-text.js';

/**
 * Storm and shared-cause events in words (issue 16). `storm_outlived`: an alert
 * still open when its channel's storm ended now has a thread of its own
 * (data: stormId, startedAt, alerts). `shared_cause`: one error group failing
 * several workflows, told on the platform channel only (data: errorGroup,
 * error, workflows [{tenant, workflow}], tenants).
 */
export function stormEventText({ event, workflow }: EventTextInput): EventText | undefined {
  const d = (event.data ?? {}) as Record<string, unknown>;
  switch (event.kind) {
    case 'storm_outlived': {
      const startedAt = typeof d.startedAt === 'string' ? new Date(d.startedAt) : undefined;
      const alerts = typeof d.alerts === 'number' ? d.alerts : undefined;
      return {
        what: 'storm_outlived',
        icon: 'info',
        parts: [
          t('Still open after the storm'),
          ...(startedAt && !Number.isNaN(startedAt.getTime()) ? [t(' of '), { type: 'time', at: startedAt, lead: 'absolute' } as TextPart] : []),
          ...(alerts ? [t(` (${plural(alerts, 'alert')})`)] : []),
          t(' ended: '),
          { type: 'strong', text: workflow.name },
          t(' has its own thread from now on.'),
        ],
      };
    }
    case 'shared_cause': {
      const listed = Array.isArray(d.workflows) ? (d.workflows as { tenant?: unknown; workflow?: unknown }[]).filter((w) => typeof w.workflow === 'string') : [];
      const count = typeof d.count === 'number' ? d.count : listed.length;
      const tenants = typeof d.tenants === 'number' ? d.tenants : 1;
      const names = listed.slice(0, 20).flatMap((w, i): TextPart[] => [t(i === 0 ? '' : ', '), { type: 'strong', text: String(w.workflow) }, t(` (${String(w.tenant)})`)]);
      return {
        what: 'shared_cause',
        icon: 'new_error',
        parts: [
          t('Shared cause: error group '),
          { type: 'code', text: typeof d.errorGroup === 'string' ? d.errorGroup : '?' },
          t(` is failing ${plural(count, 'workflow')} in ${plural(tenants, 'tenant')}: `),
          ...names,
          t(listed.length > 20 ? `, and ${listed.length - 20} more.` : '.'),
        ],
        ...(typeof d.error === 'string' && d.error ? { detail: d.error } : {}),
      };
    }
    default:
      return undefined;
  }
}

function t(text: string): TextPart {
  return { type: 'text', text };
}
