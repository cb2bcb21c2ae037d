import { detailOf, num, person, str, t, type Renderer } from './parts.js';

const runRequested: Renderer = ({ event, d }) => ({
  what: 'run_requested',
  icon: 'run',
  parts: [person(event.actor ?? str(d, 'by')), t(` started run #${num(d, 'runId') ?? '?'}${d.paused === true ? ', a one-off: the workflow stays paused' : ''}.`)],
});

const runFinished: Renderer = ({ d }) => {
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
