import { describe, expect, it } from 'vitest';
import { ENGINE_STEPS, inEngineOrder, runInEngineOrder, type EngineStep } from '../../src/engine/steps.js';

describe('the engine steps, in one order', () => {
  it('follow the data: runs in, ticks fired, overdue runs failed, then routed, then escalated, then told', () => {
    const at = (s: EngineStep) => ENGINE_STEPS.indexOf(s);
    expect(at('heartbeat')).toBe(0);
    expect(at('tick-scheduler')).toBeLessThan(at('freshness'));
    expect(at('lease-renewal')).toBeLessThan(at('freshness'));
    expect(at('freshness')).toBeLessThan(at('poller'));
    expect(at('poller')).toBeLessThan(at('escalation-clock'));
    expect(ENGINE_STEPS.at(-1)).toBe('outbox');
  });

  it('runInEngineOrder calls the steps given in that order, whatever order they are written in', async () => {
    const called: string[] = [];
    const note = (s: string) => async () => void called.push(s);
    await runInEngineOrder({ outbox: note('outbox'), poller: note('poller'), heartbeat: note('heartbeat'), freshness: note('freshness') });
    expect(called).toEqual(['heartbeat', 'freshness', 'poller', 'outbox']);
  });

  it('inEngineOrder sorts loop specs by step and keeps loops outside the engine after them, in their order', () => {
    const specs = [{ name: 'slack-home' }, { name: 'run-poller', step: 'poller' as const }, { name: 'slack-roots' }, { name: 'tick-scheduler', step: 'tick-scheduler' as const }, { name: 'monitor-uptime', step: 'heartbeat' as const }];
    expect(inEngineOrder(specs).map((s) => s.name)).toEqual(['monitor-uptime', 'tick-scheduler', 'run-poller', 'slack-home', 'slack-roots']);
  });
});
