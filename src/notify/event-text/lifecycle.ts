import { plural, relativeTime } from '../../domain/durations.js';
import { code, date, detailOf, failures, num, pagingOf, person, str, strong, t, user, type Data, type EventInput, type EventTextInput, type EventText, type Renderer, type TextPart } from './parts.js';
import { openingCauseParts } from './duration.js';
import { heldSentence } from './silence.js';
import { incidentsToldTo, type IncidentAudience, type UnresolvedIncident } from '../../domain/pagerduty-incident.js';

const opened: Renderer = ({ event, alert: a, workflow, d, offSlack }) => {
  const severity = str(d, 'severity') === 'critical' || (!str(d, 'severity') && a.severity === 'critical') ? 'critical' : 'warning';
  const count = num(d, 'consecutiveFailures') ?? a.consecutiveFailures;
  const escalateAt = severity === 'warning' ? date(d, 'escalateAt') : undefined;
  // An alert that opens critical pages like an escalation does (data.mention: the tenant's on-call).
  const { mention, paging } = pagingOf(d, offSlack);
  return {
    what: 'opened',
    icon: severity,
    parts: [
      t(`${severity === 'critical' ? 'Critical alert' : 'Alert'} opened: `),
      strong(workflow.name),
      ...(openingCauseParts(d, event.at) ?? intermittentParts(d) ?? [t(' has '), failures(count), t('.')]),
      ...(escalateAt ? [t(' It escalates to critical '), { type: 'time', at: escalateAt, relative: relativeTime(escalateAt, event.at), lead: 'relative' } as TextPart, t(' unless someone takes ownership.')] : []),
      ...paging,
    ],
    ...(mention ? { mention } : {}),
  };
};

/**
 * Opened by failing intermittently (data.intermittent, src/domain/flapping.ts): the runs that failed in the
 * window, and how it resolves, in the opening itself (no separate flapping note follows it).
 */
function intermittentParts(d: Data): TextPart[] | undefined {
  const i = d.intermittent as Data | undefined;
  if (!i || typeof i !== 'object') return undefined;
  const failed = num(i, 'failures');
  const window = num(i, 'window');
  const need = num(i, 'recoverAfter');
  if (failed === undefined || window === undefined) return undefined;
  const resolves = need ? ` It will resolve after ${plural(need, 'success', 'successes')} in a row.` : '';
  return [t(` is failing intermittently: ${failed} of the last ${plural(window, 'run')} failed.${resolves}`)];
}

const escalated: Renderer = ({ event, alert: a, d, offSlack }) => {
  const count = num(d, 'consecutiveFailures') ?? a.consecutiveFailures;
  const { mention, paging } = pagingOf(d, offSlack);
  // An alert about a run that is still running (running long, a missed completion deadline) has no failures to count.
  const withCount = count > 0 ? [t(' with '), failures(count)] : [];
  const why =
    str(d, 'reason') === 'kept_failing' && count > 0
      ? [t(' after '), failures(count), t('. Nobody has taken ownership.')]
      : [...withCount, t('. Nobody took ownership before the deadline.')];
  const by = event.actor ? [t(' by '), user(event.actor)] : [];
  const lapsed = d.lapsed && typeof d.lapsed === 'object' ? (d.lapsed as Data) : undefined;
  if (lapsed && !event.actor) return { what: 'escalated:lapsed', icon: 'critical', parts: [t('Escalated to '), strong('critical'), ...lapsedParts(event.at, lapsed, str(d, 'reason'), count), ...paging], ...(mention ? { mention } : {}) };
  return {
    what: 'escalated',
    icon: 'critical',
    parts: [t('Escalated to '), strong('critical'), ...by, ...(event.actor ? [...withCount, t('.')] : why), ...paging],
    ...(mention ? { mention } : {}),
  };
};

/**
 * An escalation that came with an ownership lapsing (data.lapsed: previousUser, ownedSince, and reason and
 * reminders when reminders went unanswered): the owner did not answer, and the alert was already due.
 */
function lapsedParts(at: Date, lapsed: Data, reason: string | undefined, count: number): TextPart[] {
  const since = date(lapsed, 'ownedSince');
  const held = since ? [t(' after '), { type: 'duration', ms: at.getTime() - since.getTime() } as TextPart] : [];
  const reminders = num(lapsed, 'reminders');
  const how = str(lapsed, 'reason') === 'unanswered' && reminders !== undefined ? [t(' lapsed'), ...held, t(`: ${reminders} ${reminders === 1 ? 'reminder' : 'reminders'} went unanswered`)] : [t(' expired'), ...held];
  const due = reason === 'kept_failing' && count > 0 ? [t(' and the alert kept failing ('), failures(count), t(')')] : [t(' and the alert was past its deadline'), ...(count > 0 ? [t(' with '), failures(count)] : [])];
  return [t(': ownership by '), person(str(lapsed, 'previousUser'), false), ...how, t(','), ...due, t('. The alert is unowned again; take it to own it.')];
}

const errorGroupChanged: Renderer = ({ alert: a, d }) => {
  const to = str(d, 'errorGroup') ?? str(d, 'to') ?? a.errorGroup ?? '?';
  const from = str(d, 'previous') ?? str(d, 'from');
  return {
    what: 'error_group_changed',
    icon: 'new_error',
    parts: [t('A different error appeared: group '), code(to), ...(from ? [t(' (was '), code(from), t(')')] : []), t('.')],
    ...detailOf(str(d, 'error') ?? a.lastError ?? undefined),
  };
};

const flapping: Renderer = ({ d }) => {
  const changes = num(d, 'transitions');
  const window = num(d, 'window');
  const need = num(d, 'recoverAfter');
  const seen = changes !== undefined ? `${plural(changes, 'change')} between success and failure${window ? ` in the last ${plural(window, 'run')}` : ''}` : 'it keeps changing between success and failure';
  return { what: 'flapping', icon: 'flapping', parts: [t(`Flapping: ${seen}. It will resolve after ${need ? plural(need, 'success', 'successes') : 'several successes'} in a row.`)] };
};

function resolvedText(event: EventInput, a: EventTextInput['alert'], d: Data, audience: IncidentAudience): EventText {
  const seconds = num(d, 'durationSeconds');
  const end = a.resolvedAt ?? event.at;
  const ms = seconds !== undefined ? seconds * 1000 : end.getTime() - a.openedAt.getTime();
  const after: TextPart = { type: 'duration', ms };
  const held = [...heldSentence(d.heldWhileSilenced), ...unresolvedIncidentParts(d, audience)];
  const note = str(d, 'note');
  const quote = note ? { quote: note } : {};
  switch (str(d, 'by') ?? 'run') {
    case 'hand':
      return { what: 'resolved:hand', icon: 'resolved', parts: [person(event.actor), t(' resolved the alert by hand after '), after, t('.'), ...held], ...quote };
    case 'workflow_disabled':
      return {
        what: 'resolved:workflow_disabled',
        icon: 'resolved',
        parts: [t('Resolved after '), after, t(str(d, 'how') === 'removed_from_file' ? ' because the workflow was removed from the workflows file.' : ' because the workflow was disabled.'), ...held],
        ...quote,
      };
    case 'workflow_deleted':
      return { what: 'resolved:workflow_deleted', icon: 'resolved', parts: [t('Resolved after '), after, t(' because the workflow was deleted.'), ...held], ...quote };
    case 'tenant_disabled':
      // No actor: the file's sync at a start; an actor: DELETE /api/v1/tenants/{id}.
      return { what: 'resolved:tenant_disabled', icon: 'resolved', parts: [t('Resolved after '), after, t(event.actor ? ' because its tenant was removed over the API.' : ' because its tenant was removed from the workflows file.'), ...held], ...quote };
    default: {
      const runId = num(d, 'runId') ?? num(d, 'resolvedByRunId');
      const successes = num(d, 'successes');
      const how = runId ? [t(`Recovered: run #${runId} succeeded${successes && successes > 1 ? ` (${successes} successes in a row)` : ''}.`)] : [t('Recovered.')];
      const outside = str(d, 'outsideTicks');
      // A run outside every tick that says why (src/domain/tick-match.ts utcCrontabNote, lateStartNote): the thread hears it too.
      const why = outside && runId ? [t(` Run #${runId} ${outside}.`)] : [];
      return { what: 'resolved:run', icon: 'resolved', parts: [...how, t(' Resolved after '), after, t('.'), ...lateReportParts(d), ...why, ...held], ...quote };
    }
  }
}

/**
 * A recovery brought by a tick's late report (its end came after the grace,
 * when the tick had been recorded missed): the alert was the grace's doing,
 * and the thread says what would prevent the next one.
 */
function lateReportParts(d: Data): TextPart[] {
  const late = d.lateReport as { afterGraceSeconds?: unknown; graceToCoverSeconds?: unknown } | undefined;
  if (!late || typeof late.afterGraceSeconds !== 'number' || typeof late.graceToCoverSeconds !== 'number') return [];
  return [
    t(' Its report came '),
    { type: 'duration', ms: late.afterGraceSeconds * 1000 },
    t(' after the tick\'s grace, so the tick was first recorded missed: this job\'s reports arrive after the grace. Consider '),
    code(`graceSeconds: ${late.graceToCoverSeconds}`),
    t(' or more, or a start ping when the job begins.'),
  ];
}

/**
 * PagerDuty incidents this resolve cannot reach (src/domain/pagerduty-incident.ts unresolvedIncidents):
 * their routing key was changed or removed while they were open. Named by dedup_key and by the key's id
 * (a digest), never the key, for a person to resolve them in PagerDuty; a tenant's audience hears only
 * that the platform's stay open (`incidentsToldTo`).
 */
function unresolvedIncidentParts(d: Data, audience: IncidentAudience): TextPart[] {
  const list = (Array.isArray(d.unresolvedIncidents) ? (d.unresolvedIncidents as Data[]) : []).flatMap((i): UnresolvedIncident[] => {
    const dedupKey = str(i, 'dedupKey');
    const destination = str(i, 'destination');
    const by = str(i, 'configuredBy');
    return dedupKey && destination ? [{ dedupKey, destination, ...(by === 'tenant' || by === 'platform' ? { configuredBy: by } : {}) }] : [];
  });
  const { named, platformOnes } = incidentsToldTo(audience, list);
  const parts = named.flatMap(({ dedupKey, destination }) => [
    t(' PagerDuty incident '),
    code(dedupKey),
    t(' was opened under routing key '),
    code(destination),
    t(', which is no longer configured: it stays open, resolve it in PagerDuty.'),
  ]);
  if (platformOnes === 0) return parts;
  const which = platformOnes === 1 ? "A PagerDuty incident on the platform's service stays open" : `${platformOnes} PagerDuty incidents on the platform's services stay open`;
  return [...parts, t(` ${which} (its routing key is no longer configured): the platform's on-call resolves it there.`)];
}

const resolved: Renderer = ({ event, alert, d, audience }) => resolvedText(event, alert, d, audience ?? 'tenant');

/** An alert's life: opening, escalating, a new error, flapping, resolving. */
export const lifecycleTexts = { opened, escalated, error_group_changed: errorGroupChanged, flapping, resolved } satisfies Record<string, Renderer>;
