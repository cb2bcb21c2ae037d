import { compactDuration, formatDuration, utcText, zoneText } from '../domain/durations.js';
import { isShadowEvent } from '../domain/events.js';
import { durationTexts } from './event-text/duration.js';
import { dependencyTexts } from './event-text/dependencies.js';
import { lifecycleTexts } from './event-text/lifecycle.js';
import { ownershipTexts } from './event-text/ownership.js';
import { t, type Data, type EventText, type EventTextInput, type Renderer, type TextPart } from './event-text/parts.js';
import { runTexts } from './event-text/runs.js';
import { silenceTexts } from './event-text/silence.js';
import { stormTexts } from './event-text/storms.js';
import { workflowTexts } from './event-text/workflow.js';

export type { EventIcon, EventInput, EventText, EventTextInput, TextPart } from './event-text/parts.js';
export { ownerChange } from './event-text/ownership.js';
export { heldCounts } from './event-text/silence.js';

/**
 * What an alert event says, decided once from its data and the alert's
 * state. Every destination only renders this value: Slack with mrkdwn and
 * mentions, email with names, the webhook as fields, PagerDuty as a summary.
 * So a reassign reads as a reassign everywhere, and no destination can
 * disagree with another on what happened.
 *
 * Pure. Each family of event kinds has its renderers in one file of
 * `event-text/` (the parts and data readers they share in `parts.ts`); a new
 * kind is one renderer there and, for a new family, one line below.
 */
const RENDERERS: Record<string, Renderer> = {
  ...lifecycleTexts,
  ...ownershipTexts,
  ...silenceTexts,
  ...runTexts,
  ...workflowTexts,
  ...durationTexts,
  ...dependencyTexts,
  ...stormTexts,
};

/** The event in words, read defensively from its data (old rows may lack fields). */
export function eventText({ event, alert, workflow, audience, offSlack }: EventTextInput): EventText {
  const d = (event.data ?? {}) as Data;
  const render = Object.hasOwn(RENDERERS, event.kind) ? RENDERERS[event.kind] : undefined;
  const text = render ? render({ event, alert, workflow, d, ...(audience ? { audience } : {}), ...(offSlack ? { offSlack } : {}) }) : { what: event.kind, icon: 'info' as const, parts: [t(`${event.kind.replace(/_/g, ' ')}.`)] };
  return isShadowEvent(d) ? pingingNobody(text, event.actor) : text;
}

/** An event of an alert in shadow (src/domain/events.ts isShadowEvent): everyone named quietly but the actor, and no mention. */
function pingingNobody(text: EventText, actor: string | null): EventText {
  const { mention: _dropped, ...rest } = text;
  return { ...rest, parts: text.parts.map((p) => ((p.type === 'user' && p.id !== actor) || p.type === 'group' ? { ...p, quiet: true } : p)) };
}

/**
 * The event in plain text: people by name when `nameOf` knows them (else
 * `@U…`), times in UTC with the relative words, durations in the compact
 * form Slack shows ("7h 02m"), so no two destinations word one event apart.
 * For email, PagerDuty and the webhook's summary.
 */
export function plainEventText(text: EventText, nameOf: (userId: string) => string | undefined = () => undefined): string {
  const body = text.parts.map((p) => plainPart(p, nameOf)).join('');
  return text.quote ? `${body} Note: ${text.quote}` : body;
}

export function plainPart(p: TextPart, nameOf: (userId: string) => string | undefined = () => undefined): string {
  switch (p.type) {
    case 'text':
    case 'strong':
    case 'code':
      return p.text;
    case 'user':
      return nameOf(p.id) ?? `@${p.id}`;
    case 'group':
      return `@${p.id}`;
    case 'time':
      if (p.zone) return zoneText(p.at, p.zone);
      if (!p.relative) return utcText(p.at);
      return p.lead === 'relative' ? `${p.relative} (at ${utcText(p.at)})` : `${utcText(p.at)} (${p.relative})`;
    case 'duration':
      return compactDuration(p.ms);
  }
}

/** The parts as JSON for the webhook: times as ISO strings, durations in seconds and words. */
export function eventTextFields(text: EventText) {
  return {
    what: text.what,
    sentence: plainEventText(text),
    parts: text.parts.map((p) =>
      p.type === 'time'
        ? { type: p.type, at: p.at.toISOString(), ...(p.relative ? { relative: p.relative, lead: p.lead ?? 'absolute' } : {}), ...(p.zone ? { zone: p.zone } : {}) }
        : p.type === 'duration'
          ? { type: p.type, seconds: Math.round(p.ms / 1000), words: formatDuration(p.ms) }
          : p,
    ),
    note: text.quote ?? null,
    detail: text.detail ?? null,
    mention: text.mention ?? null,
  };
}
