import { describe, expect, it } from 'vitest';
import { editDistanceWithin, misspelledNames } from '../../src/domain/names.js';
import { closestNames } from '../../src/slack/listeners/commands/closest-names.js';

/**
 * `/scheduler run <name>` with a name not found suggests the closest names
 * in the channel's scope. Comparing two names costs the product of their
 * lengths: a 4,000-character name against 2,000 workflows held the bot (its
 * one thread: pings, the API, the scheduler) for about 4 seconds, and any
 * member of a linked channel could send it again and again. A name whose
 * length is further from the one asked for than the cutoff cannot be within
 * it, so its characters are never compared. Tested by the characters read,
 * not by time: a name here throws when one of its characters is read.
 */
function unreadable(text: string): string {
  return new Proxy(Object(text) as object, {
    get(_target, p) {
      if (p === 'length') return text.length;
      // String.prototype.includes asks whether its argument is a regular expression.
      if (p === Symbol.match) return undefined;
      if (p === 'includes') return (other: string) => text.includes(other);
      if (p === Symbol.toPrimitive || p === 'toString' || p === 'valueOf') return () => text;
      throw new Error(`a character of ${JSON.stringify(text)} was read (${String(p)})`);
    },
  }) as unknown as string;
}

/** A workflow name as closestNames lowercases it: unreadable. */
const candidate = (name: string) => ({ toLowerCase: () => unreadable(name.toLowerCase()) }) as unknown as string;

describe('suggestions for a workflow name not found', () => {
  it('a name 4,000 characters long is not compared character by character with each workflow name (was: 2,000 names, 4 seconds of the bot)', () => {
    const names = Array.from({ length: 2000 }, (_, i) => candidate(`nightly-export-${i}`));
    expect(closestNames('x'.repeat(4000), names)).toEqual([]);
  });

  it('editDistanceWithin: lengths further apart than the cutoff are not within it, unread; close ones are still measured', () => {
    expect(editDistanceWithin(unreadable('x'.repeat(4000)), unreadable('nightly-etl'), 2000)).toBeUndefined();
    expect(editDistanceWithin('nightly-elt', 'nightly-etl', 2)).toBe(1);
    expect(editDistanceWithin('nightly', 'weekly', 2)).toBeUndefined();
  });

  it('long names within reach of the length asked for are compared only within the budget: past it, the names left are not read', () => {
    const wanted = 'y'.repeat(30);
    // The first name costs 30 × 30 comparisons of a budget of 1,000: the second would pass it, and is not read.
    expect(closestNames(wanted, ['z'.repeat(30), candidate('w'.repeat(30))], 3, 1000)).toEqual([]);
    expect(closestNames(wanted, ['y'.repeat(29) + 'z', candidate('w'.repeat(30))], 3, 1000)).toEqual(['y'.repeat(29) + 'z']);
  });

  it('a typo still finds its workflow', () => {
    expect(closestNames('nightly-elt', ['nightly-etl', 'weekly-report'])).toEqual(['nightly-etl']);
  });
});

describe('the "did you mean" of an unknown field in an API body (a tenant token or a callback token sends it)', () => {
  it('a field name far longer than any known one is not compared with them (was: 250,000 characters, 1.5 s of the bot per request)', () => {
    const huge = { toUpperCase: () => unreadable('X'.repeat(250_000)) } as unknown as string;
    expect(misspelledNames([huge], ['CRON', 'TIMEZONE', 'DEPENDSON'])).toEqual([]);
    expect(misspelledNames(['dependOn'], ['CRON', 'TIMEZONE', 'DEPENDSON'])).toEqual([{ name: 'dependOn', meant: 'DEPENDSON' }]);
  });
});
