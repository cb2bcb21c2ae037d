import { describe, expect, it } from 'vitest';
import { isWatched, tickHeldBack } from '../../src/domain/watched.js';

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
