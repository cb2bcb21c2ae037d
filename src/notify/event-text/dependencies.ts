import { plural } from '../../domain/durations.js';
import type { EventInput, EventText, TextPart } from '../event-text.js';

/**
 * The dependency events in words (issue 16): `upstream_affected` on the
 * upstream alert, `outlived_upstream` and `upstream_broke` on a downstream
 * one. Read defensively from the event's data; names are raw (each renderer
 * escapes them). Undefined for any other kind.
 */
export function dependencyEventText(event: Pick<EventInput, 'kind' | 'data' | 'at'>, workflow: { name: string }): EventText | undefined {
  const d = (event.data ?? {}) as Record<string, unknown>;
  switch (event.kind) {
    case 'upstream_affected':
      return { what: 'upstream_affected', icon: 'info', parts: affectedParts(d) };
    case 'outlived_upstream': {
      const resolvedAt = typeof d.upstreamResolvedAt === 'string' ? new Date(d.upstreamResolvedAt) : undefined;
      const when: TextPart[] = resolvedAt && !Number.isNaN(resolvedAt.getTime()) ? [t(' at '), { type: 'time', at: resolvedAt }] : [];
      return {
        what: 'outlived_upstream',
        icon: 'warning',
        parts: [strong(workflow.name), t(' outlived its upstream incident: '), ...upstreamName(d), t(' recovered'), ...when, t(', and this workflow kept failing past its own threshold.')],
      };
    }
    case 'upstream_broke':
      return {
        what: 'upstream_broke',
        icon: 'info',
        parts: [t('Upstream '), ...upstreamName(d), t(' now has an alert of its own'), ...alertNo(d), t('. This alert stays open; failures here may follow from it.')],
      };
    default:
      return undefined;
  }
}

const t = (text: string): TextPart => ({ type: 'text', text });
const strong = (text: string): TextPart => ({ type: 'strong', text });

function upstreamName(d: Record<string, unknown>): TextPart[] {
  if (typeof d.upstreamWorkflow === 'string' && d.upstreamWorkflow) return [strong(d.upstreamWorkflow)];
  return [t("another tenant's workflow")];
}

function alertNo(d: Record<string, unknown>): TextPart[] {
  return typeof d.upstreamAlertId === 'number' ? [t(` (alert #${d.upstreamAlertId})`)] : [];
}

interface Affected {
  workflow: string;
  failures: number;
  missed: number;
}

function affectedOf(v: unknown): Affected[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((a: Record<string, unknown>) =>
    a && typeof a.workflow === 'string' ? [{ workflow: a.workflow, failures: typeof a.failures === 'number' ? a.failures : 0, missed: typeof a.missed === 'number' ? a.missed : 0 }] : [],
  );
}

/** "Also affected, with no alerts of their own while this one is open: *a* (1 failure), *b* (1 missed tick) and 2 workflows of other tenants." */
function affectedParts(d: Record<string, unknown>): TextPart[] {
  const affected = affectedOf(d.affected);
  const others = typeof d.otherTenants === 'number' ? d.otherTenants : 0;
  const items: TextPart[][] = affected.map((a) => {
    const counts = [a.failures ? plural(a.failures, 'failure') : '', a.missed ? plural(a.missed, 'missed tick') : ''].filter(Boolean).join(', ');
    return [strong(a.workflow), ...(counts ? [t(` (${counts})`)] : [])];
  });
  if (others > 0) items.push([t(`${plural(others, "workflow of another tenant", "workflows of other tenants")}`)]);
  const joined = items.flatMap((p, i) => (i === 0 ? p : [t(i === items.length - 1 ? ' and ' : ', '), ...p]));
  const total = affected.length + others;
  if (total === 0) return [t('Also affected: downstream workflows, with no alerts of their own while this one is open.')];
  return [t(`Also affected (${plural(total, 'downstream workflow')}, no alerts of their own while this one is open): `), ...joined, t('.')];
}
