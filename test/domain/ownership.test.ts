import { describe, expect, it } from 'vitest';
import { decideReassign } from '../../src/domain/ownership.js';

const alert = { ownerTeam: 'engineering', ownerUser: 'U0BOB', ownerNote: 'vendor ticket 42' };

describe('decideReassign', () => {
  it.each([
    ['the same team, person and note', { team: 'engineering', user: 'U0BOB', note: 'vendor ticket 42' }, 'unchanged'],
    ['the same, spaced differently', { team: 'engineering', user: ' U0BOB', note: 'vendor ticket 42  ' }, 'unchanged'],
    ['another person', { team: 'engineering', user: 'U0CAROL', note: 'vendor ticket 42' }, 'change'],
    ['no person', { team: 'engineering', user: null, note: 'vendor ticket 42' }, 'change'],
    ['the note cleared', { team: 'engineering', user: 'U0BOB', note: '  ' }, 'change'],
    ['another team', { team: 'customer', user: 'U0BOB', note: 'vendor ticket 42' }, 'change'],
    ['the customer without a note', { team: 'customer', user: 'U0BOB', note: null }, 'invalid'],
    ['an unknown team', { team: 'sales', user: 'U0BOB', note: 'x' }, 'invalid'],
  ])('%s', (_name, request, kind) => {
    expect(decideReassign(alert, request).kind).toBe(kind);
  });

  it('an unowned alert with no note, reassigned to its team with no one named, is unchanged', () => {
    expect(decideReassign({ ownerTeam: 'engineering', ownerUser: null, ownerNote: null }, { team: 'engineering' })).toEqual({ kind: 'unchanged', owner: { team: 'engineering', user: null, note: null } });
  });
});
