import { expect, it } from 'vitest';
import { clockScale } from '../../bench/clock-scale.js';
import { expectWellFormed, smokeContext } from './well-formed.js';

it('clock scale: lateness, escalation and freshness passes and RSS for every due workflow fired', async () => {
  const figures = await clockScale(smokeContext());
  expectWellFormed(figures, 'clock scale', ['tick lateness p99 @300', 'escalation pass @300', 'freshness pass @300', 'replica RSS @300']);
  const p = figures[0]!.parameters;
  expect(p.fired).toBe(p.everyMinute);
}, 240_000);
