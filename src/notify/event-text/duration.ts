import { relativeTime } from '../../domain/durations.js';
import { date, num, pagingOf, t, type Data, type EventIcon, type EventText, type Renderer, type TextPart } from './parts.js';

/**
 * The run-duration events in words (issue 16): `running_long`,
 * `completion_missed`, `too_fast`, and the cause an opening names when one of
 * them opened the alert. Pure, read defensively from the event's data.
 */

const seconds = (s: number): TextPart => ({ type: 'duration', ms: s * 1000 });
const when = (at: Date, now: Date, lead: 'relative' | 'absolute'): TextPart => ({ type: 'time', at, relative: relativeTime(at, now), lead });
const at = (time: Date): TextPart => ({ type: 'time', at: time });
const runRef = (d: Data) => (num(d, 'runId') ? `run #${num(d, 'runId')}` : 'the run');

/** "has been running for 1 hour 5 minutes; it usually takes 20 minutes (median of 6 successful runs)." */
function longParts(d: Data, now: Date): TextPart[] {
  const running = num(d, 'runningSeconds');
  const normal = (d.normal ?? null) as Data | null;
  const median = normal ? num(normal, 'medianSeconds') : undefined;
  const samples = normal ? num(normal, 'samples') : undefined;
  const timeoutAt = date(d, 'timeoutAt');
  return [
    t(`${runRef(d)} has been running`),
    ...(running !== undefined ? [t(' for '), seconds(running)] : []),
    ...(median !== undefined
      ? [t('; it usually takes '), seconds(median), t(samples ? ` (median of the last ${samples} successful runs)` : '')]
      : num(d, 'afterSeconds') !== undefined
        ? [t('; the limit set for it is '), seconds(num(d, 'afterSeconds')!)]
        : []),
    t('.'),
    ...(timeoutAt ? [t(' It times out '), when(timeoutAt, now, 'relative'), t('.')] : []),
  ];
}

/** "no success for the tick of 02:00 by 06:00 Europe/Berlin; run #7 is still running." */
function deadlineParts(d: Data): TextPart[] {
  const tick = date(d, 'tick');
  const deadline = date(d, 'deadline');
  // Both are times of the schedule, read on the deadline's own zone ("06:00 Europe/Berlin"), not only the reader's.
  const zone = typeof d.completeBy === 'string' ? d.completeBy.split(' ')[1] : undefined;
  const at = (time: Date): TextPart => ({ type: 'time', at: time, ...(zone ? { zone } : {}) });
  const still = d.running === true ? [t(`; ${runRef(d)} is still running`)] : typeof d.status === 'string' && d.status !== '' ? [t(`; ${runRef(d)} ${String(d.status)}`)] : [t('; no run started')];
  return [
    t('no success'),
    ...(tick ? [t(' for the tick of '), at(tick)] : []),
    ...(deadline ? [t(' by its deadline, '), at(deadline)] : []),
    ...still,
    t('.'),
  ];
}

/** What follows the workflow's name in an opening that a duration cause opened; undefined for any other opening. */
export function openingCauseParts(data: Data, now: Date): TextPart[] | undefined {
  const cause = data.cause as Data | undefined;
  if (!cause || typeof cause !== 'object') return undefined;
  if (cause.kind === 'running_long') return [t(' is running long: '), ...longParts(cause, now)];
  if (cause.kind === 'completion_missed') return [t(' missed its completion deadline: '), ...deadlineParts(cause)];
  return undefined;
}

const reply = (what: string, icon: EventIcon, parts: TextPart[]): EventText => ({ what, icon, parts });

/** The duration events as replies in the open alert's thread. */
export const durationTexts = {
  running_long: ({ event, d }) => reply('running_long', 'warning', [t('Running long: '), ...longParts(d, event.at)]),
  completion_missed: ({ d, offSlack }) => {
    const { mention, paging } = pagingOf(d, offSlack);
    return { ...reply('completion_missed', 'critical', [t('Completion deadline missed: '), ...deadlineParts(d), ...paging]), ...(mention ? { mention } : {}) };
  },
  too_fast: ({ d }) => {
    const error = typeof d.error === 'string' && d.error ? { detail: d.error } : {};
    return { ...reply('too_fast', 'failed', [t(`Too fast to be real: ${runRef(d)} succeeded faster than the workflow's minimum duration, so it counts as a failure.`)]), ...error };
  },
} satisfies Record<string, Renderer>;
