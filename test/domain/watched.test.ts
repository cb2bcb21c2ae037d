import { describe, expect, it } from 'vitest';
import { isWatched } from '../../src/domain/watched.js';

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
