import { plural } from '../../domain/durations.js';
import { date, num, str, strong, t, type Data, type Renderer, type TextPart } from './parts.js';

/**
 * The dependency events in words (issue 16, docs/alerts.md):
 * `upstream_affected` on the upstream alert, `outlived_upstream` and
 * `upstream_broke` on a downstream one. Names are raw (each renderer escapes
 * them); another tenant's workflow is never named here, the engine leaves it out.
 */

/** The upstream by name within the tenant; "another tenant's workflow" otherwise. */
function upstreamName(d: Data): TextPart[] {
  const name = str(d, 'upstreamWorkflow');
  return name ? [strong(name)] : [t("another tenant's workflow")];
}

function affectedOf(v: unknown): { workflow: string; failures: number; missed: number }[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((a: Data) => (a && typeof a.workflow === 'string' ? [{ workflow: a.workflow, failures: num(a, 'failures') ?? 0, missed: num(a, 'missed') ?? 0 }] : []));
}

/** "Also affected (3 downstream workflows, …): *a* (1 failure), *b* (1 missed tick) and 1 workflow of another tenant." */
const upstreamAffected: Renderer = ({ d }) => {
  const affected = affectedOf(d.affected);
  const others = num(d, 'otherTenants') ?? 0;
  const items: TextPart[][] = affected.map((a) => {
    const counts = [a.failures ? plural(a.failures, 'failure') : '', a.missed ? plural(a.missed, 'missed tick') : ''].filter(Boolean).join(', ');
    return [strong(a.workflow), ...(counts ? [t(` (${counts})`)] : [])];
  });
  if (others > 0) items.push([t(plural(others, 'workflow of another tenant', 'workflows of other tenants'))]);
  const total = affected.length + others;
  if (total === 0) return { what: 'upstream_affected', icon: 'info', parts: [t('Also affected: downstream workflows, with no alerts of their own while this one is open.')] };
  const joined = items.flatMap((p, i) => (i === 0 ? p : [t(i === items.length - 1 ? ' and ' : ', '), ...p]));
  return { what: 'upstream_affected', icon: 'info', parts: [t(`Also affected (${plural(total, 'downstream workflow')}, no alerts of their own while this one is open): `), ...joined, t('.')] };
};

/** How the upstream incident ended, when it was not a recovery (`by` of its `resolved` event). */
const ENDED_BY: Record<string, string> = {
  hand: "'s alert was resolved by hand",
  workflow_disabled: ' was disabled',
  workflow_deleted: ' was deleted',
  tenant_disabled: "'s tenant was disabled",
};

const outlivedUpstream: Renderer = ({ workflow, d }) => {
  const resolvedAt = date(d, 'upstreamResolvedAt');
  return {
    what: 'outlived_upstream',
    icon: 'warning',
    parts: [
      strong(workflow.name),
      t(' outlived its upstream incident: '),
      ...upstreamName(d),
      t(ENDED_BY[str(d, 'upstreamEndedBy') ?? ''] ?? ' recovered'),
      ...(resolvedAt ? [t(' at '), { type: 'time', at: resolvedAt } as TextPart] : []),
      t(', and this workflow kept failing past its own threshold.'),
    ],
  };
};

const upstreamBroke: Renderer = ({ d }) => {
  const alertId = num(d, 'upstreamAlertId');
  return {
    what: 'upstream_broke',
    icon: 'info',
    parts: [t('Upstream '), ...upstreamName(d), t(' now has an alert of its own'), ...(alertId !== undefined ? [t(` (alert #${alertId})`)] : []), t('. This alert stays open; failures here may follow from it.')],
  };
};

export const dependencyTexts = {
  upstream_affected: upstreamAffected,
  outlived_upstream: outlivedUpstream,
  upstream_broke: upstreamBroke,
} satisfies Record<string, Renderer>;
