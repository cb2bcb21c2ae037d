import { expect, it } from 'vitest';
import { slackDrain } from '../../bench/slack-drain.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('Slack drain: a storm across 50 paced channels drains with no duplicate and no loss', async () => {
  const figures = await slackDrain(smokeContext());
  expectWellFormed(figures, 'Slack drain', ['drain time / theoretical minimum', 'duplicates', 'losses']);
  expect(figures.find((f) => f.figure === 'duplicates')!.value).toBe(0);
  expect(figures.find((f) => f.figure === 'losses')!.value).toBe(0);
}, 120_000);
