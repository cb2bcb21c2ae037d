import { compactDuration } from '../../domain/durations.js';
import { detailOf, num, person, str, t, type Data, type EventText, type Renderer } from './parts.js';

const runRequested: Renderer = ({ event, d }) => ({
  what: 'run_requested',
  icon: 'run',
  parts: [person(event.actor ?? str(d, 'by')), t(` started run #${num(d, 'runId') ?? '?'}${d.paused === true ? ', a one-off: the workflow stays paused' : ''}.`)],
});

/** A timed-out run's own end, arriving late (`data.late`): how it ended, how late; the timeout stands. */
const lateEnd = (d: Data, late: Data): EventText => {
  const ok = str(late, 'status') === 'succeeded';
  const after = num(late, 'lateSeconds');
  return {
    what: `run_finished:late_${ok ? 'succeeded' : 'failed'}`,
    icon: ok ? 'succeeded' : 'failed',
    parts: [t(`Run #${num(d, 'runId') ?? '?'}, failed as timed out, ended ${ok ? 'successfully' : 'with a failure'}${after === undefined ? '' : ` ${compactDuration(after * 1000)}`} after its timeout. The timeout still counts as its failure.`)],
    ...(ok ? {} : detailOf(str(late, 'error'))),
  };
};

const runFinished: Renderer = ({ d }) => {
  if (d.late && typeof d.late === 'object') return lateEnd(d, d.late as Data);
  const ok = str(d, 'status') === 'succeeded';
  return {
    what: `run_finished:${ok ? 'succeeded' : 'failed'}`,
    icon: ok ? 'succeeded' : 'failed',
    parts: [t(`Run #${num(d, 'runId') ?? '?'} ${ok ? 'succeeded' : str(d, 'status') === 'timed_out' ? 'timed out' : 'failed'}.`)],
    ...(ok ? {} : detailOf(str(d, 'error'))),
  };
};

/** Runs started by hand ("Run now") and how they went. */
export const runTexts = { run_requested: runRequested, run_finished: runFinished } satisfies Record<string, Renderer>;
