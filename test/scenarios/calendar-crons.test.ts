import { describe, expect, it } from 'vitest';
import { checkCron } from '../../src/domain/schedule.js';
import { storyByChannel, threadsOf } from '../replay/transcript-shape.js';
import { alertsOf, replay, tickRows } from './support.js';

/**
 * Calendar crons a finance team writes: payroll on the last weekday of the
 * month (`LW`), the board pack on the second Tuesday (`2#2`), a month-end
 * close on the last day (`L`) in Chatham (+13:45 in February), through
 * February 2028 (a leap year) and Europe's spring-forward. A payroll run that
 * fails on 29 February pages at once (a monthly job does not wait for three
 * failures, three months) and resolves on the next month's run.
 */

const FIN = { id: 'fin', name: 'Finance', channel: 'CFIN' };

describe('calendar crons: last weekday, nth weekday, last day, across February 2028', { timeout: 120_000 }, () => {
  it('W is read as the nearest weekday in the month, as the docs say: 15W, 1W, LW', () => {
    for (const cron of ['0 18 LW * *', '0 18 15W * *', '0 18 1W * *']) expect(checkCron(cron), cron).toEqual({ ok: true });
  });

  it('payroll fails on 29 Feb 2028: one critical thread opened after its retries, resolved by the next morning\'s Run now; the other calendar jobs fire on their days', async () => {
    const { db, transcript } = await replay(
      {
        start: '2028-02-27T00:00:00Z',
        until: '2028-03-28T00:00:00Z',
        platformChannel: 'CPLATFORM',
        tenants: [FIN],
        workflows: [
          { tenant: 'fin', name: 'payroll', cron: '0 18 LW * *', timezone: 'Europe/Berlin', mode: 'managed' },
          { tenant: 'fin', name: 'board-pack', cron: '0 9 * * 2#2', timezone: 'Europe/Berlin', mode: 'managed' },
          { tenant: 'fin', name: 'month-end', cron: '0 23 L * *', timezone: 'Pacific/Chatham', mode: 'managed' },
        ],
        outcomes: [{ workflow: 'payroll', from: '2028-02-29T17:00:00Z', to: '2028-02-29T17:00:00Z', attempts: [{ status: 'failed', error: 'bank API 503' }] }],
        // 09:00 Berlin the next morning: the bank is back, payroll is run from Slack.
        actions: [{ at: '2028-03-01T08:00:00Z', user: 'UPAY', channel: 'CFIN', action: 'run_now', workflow: 'payroll' }],
      },
      { escalationIntervalSeconds: 3600 },
    );
    // Tuesday 29 February 18:00 CET, the month's last weekday (a leap year's); none on the days after.
    expect(await tickRows(db, 'payroll', true)).toEqual(['02-29T17:00 failed']);
    // The second Tuesday of March (the 14th), 09:00 CET.
    expect(await tickRows(db, 'board-pack', true)).toEqual(['03-14T08:00 succeeded']);
    // 23:00 on the last day of February in Chatham (+13:45): the 29th, not the 28th.
    expect(await tickRows(db, 'month-end', true)).toEqual(['02-29T09:15 succeeded']);

    const [alert, ...others] = await alertsOf(db);
    expect(others).toEqual([]);
    // Four attempts of a minute each: the first, and the monthly cadence's three immediate retries.
    expect(alert).toMatchObject({ workflow: 'payroll', severity: 'critical', status: 'resolved', consecutiveFailures: 1, escalatedAt: null });
    expect(alert!.openedAt.toISOString()).toBe('2028-02-29T17:04:00.000Z');
    expect(alert!.resolvedAt!.toISOString()).toBe('2028-03-01T08:01:00.000Z');
    const story = storyByChannel(threadsOf(transcript.calls));
    for (const channel of ['CFIN', 'CPLATFORM']) expect(story[channel], channel).toEqual({ payroll: [['opened', 'run_requested', 'run_finished', 'resolved']] });
  });
});
