import { plural } from '../../domain/durations.js';
import { code, date, num, str, strong, t, type Renderer, type TextPart } from './parts.js';

/**
 * Storms and shared causes (issue 16). `storm_outlived`: an alert still open
 * when its channel's storm ended now has a thread of its own (data: stormId,
 * startedAt, alerts). `shared_cause`: one error group failing several
 * workflows, told on the platform channel only (data: errorGroup, error,
 * count, tenants, workflows [{tenant, workflow, alertId}]).
 */
const stormOutlived: Renderer = ({ workflow, d }) => {
  const startedAt = date(d, 'startedAt');
  const alerts = num(d, 'alerts');
  return {
    what: 'storm_outlived',
    icon: 'info',
    parts: [
      t('Still open after the storm'),
      ...(startedAt ? [t(' of '), { type: 'time', at: startedAt, lead: 'absolute' } as TextPart] : []),
      ...(alerts ? [t(` (${plural(alerts, 'alert')})`)] : []),
      t(' ended: '),
      strong(workflow.name),
      t(' has its own thread from now on.'),
    ],
  };
};

const LISTED = 20;

const sharedCause: Renderer = ({ d }) => {
  const listed = Array.isArray(d.workflows) ? (d.workflows as { tenant?: unknown; workflow?: unknown }[]).filter((w) => typeof w.workflow === 'string') : [];
  const count = num(d, 'count') ?? listed.length;
  const tenants = num(d, 'tenants') ?? 1;
  const names = listed.slice(0, LISTED).flatMap((w, i): TextPart[] => [t(i === 0 ? '' : ', '), strong(String(w.workflow)), t(` (${String(w.tenant)})`)]);
  const error = str(d, 'error');
  return {
    what: 'shared_cause',
    icon: 'new_error',
    parts: [
      t('Shared cause: error group '),
      code(str(d, 'errorGroup') ?? '?'),
      t(` is failing ${plural(count, 'workflow')} in ${plural(tenants, 'tenant')}: `),
      ...names,
      t(listed.length > LISTED ? `, and ${listed.length - LISTED} more.` : '.'),
    ],
    ...(error ? { detail: error } : {}),
  };
};

export const stormTexts: Record<string, Renderer> = { storm_outlived: stormOutlived, shared_cause: sharedCause };
