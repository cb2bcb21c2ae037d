import { describe, expect, it } from 'vitest';
import { nextRender } from '../../src/domain/render-order.js';

describe('nextRender', () => {
  it.each([
    [undefined, undefined, undefined],
    [{ target: 5 }, undefined, 'storm'],
    [undefined, { target: 5 }, 'root'],
    // The one whose newest undisplayed event is older goes first: a storm that keeps changing moves back.
    [{ target: 90 }, { target: 40 }, 'root'],
    [{ target: 40 }, { target: 90 }, 'storm'],
    // A tie: the storm message, which stands for many alerts.
    [{ target: 40 }, { target: 40 }, 'storm'],
  ] as const)('storm %o, root %o: %s', (storm, root, choice) => {
    expect(nextRender(storm, root)).toBe(choice);
  });
});
