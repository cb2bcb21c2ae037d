import { describe, expect, it } from 'vitest';
import { derivePolicy, profileFor } from '../../src/domain/cadence.js';
import { observedSkipNote, overlapDecision } from '../../src/domain/overlap.js';

describe('overlapDecision', () => {
  const previous = { id: 812, tick: new Date('2026-03-10T01:00:00Z'), attempt: 1 };
  it.each([
    ['allow', undefined, { fire: true, note: null }],
    ['skip', undefined, { fire: true, note: null }],
    ['allow', previous, { fire: true, note: 'started while run 812 (tick 2026-03-10T01:00:00.000Z) was still running (overlap: allow)' }],
    ['skip', previous, { fire: false, note: 'not fired: run 812 (tick 2026-03-10T01:00:00.000Z) was still running (overlap: skip)' }],
    ['skip', { ...previous, attempt: 3 }, { fire: false, note: 'not fired: run 812 (tick 2026-03-10T01:00:00.000Z, attempt 3) was still running (overlap: skip)' }],
    ['skip', { id: 9, tick: null, attempt: 1 }, { fire: false, note: 'not fired: run 9 (a manual run) was still running (overlap: skip)' }],
  ] as const)('%s with %o still running → %o', (policy, running, expected) => {
    expect(overlapDecision(policy, running)).toEqual(expected);
  });

  it('allows by default (Kubernetes\' Allow); a workflow may choose skip', () => {
    expect(derivePolicy(3600).overlap).toBe('allow');
    expect(profileFor('0 * * * *', 'UTC', { overlap: 'skip' }, new Date('2026-03-10T00:00:00Z')).overlap).toBe('skip');
  });
});

describe('observedSkipNote: an observed tick with no run, while a run of the workflow still went', () => {
  const previous = { id: 812, tick: new Date('2026-03-10T01:00:00Z'), attempt: 1 };
  it.each([
    ['allow', previous, null],
    ['skip', undefined, null],
    ['skip', previous, 'not run: run 812 (tick 2026-03-10T01:00:00.000Z) was still running (overlap: skip)'],
    ['skip', { id: 9, tick: null, attempt: 1 }, 'not run: run 9 (a manual run) was still running (overlap: skip)'],
  ] as const)('%s with %o still running → %s', (policy, running, expected) => {
    expect(observedSkipNote(policy, running)).toBe(expected);
  });
});
