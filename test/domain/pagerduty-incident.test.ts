import { describe, expect, it } from 'vitest';
import { keyCutOffRefusal, keysCutOff, opensIncident } from '../../src/domain/pagerduty-incident.js';

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

describe('which PagerDuty keys a change of configuration would cut off from the incidents they hold', () => {
  const OLD = 'pagerduty:aaaaaaaaaaaa';
  const NEW = 'pagerduty:bbbbbbbbbbbb';
  const held = [{ destination: OLD, openAlerts: 2 }];

  it('a key holding incidents removed (or changed: the new key is another destination) is cut off; kept, retired or not, it is not', () => {
    expect(keysCutOff(held, [OLD], [NEW])).toEqual([{ destination: OLD, openAlerts: 2 }]);
    expect(keysCutOff(held, [OLD], [NEW, OLD])).toEqual([]);
  });

  it('a key holding nothing, or one the change did not configure before (already gone), is not the change\'s doing', () => {
    expect(keysCutOff([], [OLD], [NEW])).toEqual([]);
    expect(keysCutOff(held, [], [NEW])).toEqual([]);
  });

  it('the refusal names the key by its id and the count, and says to keep it retired', () => {
    expect(keyCutOffRefusal({ destination: OLD, openAlerts: 2 })).toBe(
      `PagerDuty destination ${OLD} holds the incidents of 2 open alerts: removing or changing its routing key would leave them open in PagerDuty, and page again on a new key. Keep it listed with "retired": true until they resolve (or resolve them), then remove it`,
    );
    expect(keyCutOffRefusal({ destination: OLD, openAlerts: 1 })).toContain('of 1 open alert:');
  });
});
