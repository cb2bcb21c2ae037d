import { describe, expect, it } from 'vitest';
import { isWatched, launchHeldBack, tickHeldBack } from '../../src/domain/watched.js';

describe('whether a workflow is watched', () => {
  it.each([
    // workflow enabled, monitoring, tenant enabled, watched
    [true, true, true, true],
    [false, true, true, false],
    [true, false, true, false],
    [true, true, false, false],
    [false, false, false, false],
  ])('workflow enabled %s, monitoring %s, tenant enabled %s: watched %s', (enabled, monitoring, tenantEnabled, watched) => {
    expect(isWatched({ enabled, monitoring }, { enabled: tenantEnabled })).toBe(watched);
  });
});

describe('whether a claimed tick may still be launched', () => {
  it.each([
    // workflow enabled, paused, tenant enabled, note (undefined: launched)
    [true, false, true, undefined],
    [true, true, true, 'not fired: the workflow was paused before its launch'],
    [false, false, true, 'not fired: the workflow was disabled before its launch'],
    [false, true, true, 'not fired: the workflow was disabled before its launch'],
    [true, false, false, 'not fired: its tenant was disabled before its launch'],
    [false, true, false, 'not fired: its tenant was disabled before its launch'],
  ])('workflow enabled %s, paused %s, tenant enabled %s: %s', (enabled, paused, tenantEnabled, note) => {
    expect(tickHeldBack({ enabled, paused }, { enabled: tenantEnabled })).toBe(note);
  });
});

describe('whether a retry or a Run now committed a moment ago may still be launched', () => {
  it.each([
    // trigger, workflow enabled, paused, tenant enabled, note and verdict reason (undefined: launched)
    ['retry', true, false, true, undefined],
    ['retry', true, true, true, { note: "not launched: the workflow was paused before this retry's launch", verdict: "the workflow was paused before its retry's launch" }],
    ['retry', false, false, true, { note: "not launched: the workflow was disabled before this retry's launch", verdict: "the workflow was disabled before its retry's launch" }],
    ['retry', true, false, false, { note: "not launched: its tenant was disabled before this retry's launch", verdict: "its tenant was disabled before its retry's launch" }],
    // A person's one-off: a paused workflow runs it; a disable holds it back.
    ['manual', true, true, true, undefined],
    ['manual', false, true, true, { note: 'not run: the workflow was disabled before its launch', verdict: '' }],
    ['manual', true, false, false, { note: 'not run: its tenant was disabled before its launch', verdict: '' }],
  ] as const)('%s, workflow enabled %s, paused %s, tenant enabled %s: %j', (trigger, enabled, paused, tenantEnabled, held) => {
    expect(launchHeldBack(trigger, { enabled, paused }, { enabled: tenantEnabled })).toEqual(held);
  });
});
