import { describe, expect, it } from 'vitest';
import { opensIncident } from '../../src/domain/pagerduty-incident.js';

describe('whether a PagerDuty key that has not heard of an alert may open an incident for it', () => {
  const OLD = 'pagerduty:aaaaaaaaaaaa';
  const NEW = 'pagerduty:bbbbbbbbbbbb';
  const OPS = 'pagerduty:cccccccccccc';

  it('a key rotated in beside the retired key holding the incident opens none; one configured at the opening does', () => {
    expect(opensIncident(NEW, [OLD, OPS], true)).toBe(false);
    expect(opensIncident(OPS, [OLD, OPS], true)).toBe(true);
  });

  it('with no retired key holding the alert, any key may (a new destination: one incident per key)', () => {
    expect(opensIncident(NEW, [OLD], false)).toBe(true);
    expect(opensIncident(NEW, [], false)).toBe(true);
  });

  it('an alert opened before the keys were recorded is routed as before', () => {
    expect(opensIncident(NEW, null, true)).toBe(true);
    expect(opensIncident(NEW, undefined, true)).toBe(true);
  });
});
