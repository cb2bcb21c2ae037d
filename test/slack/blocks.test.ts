import { describe, expect, it } from 'vitest';
import { renderAlertReply, renderAlertRoot, type AlertCard } from '../../src/slack/blocks/alert-card.js';
import { cadenceInWords, formatDuration, parseDuration } from '../../src/domain/durations.js';
import { renderHistory, type HistoryRow } from '../../src/slack/blocks/history.js';
import { renderHome } from '../../src/slack/blocks/home.js';
import { renderStormMessage } from '../../src/slack/blocks/storm-message.js';
import { escapeMrkdwn, LIMITS, safeText, TRUNCATION_MARKER } from '../../src/slack/blocks/limits.js';
import { renderReassignModal } from '../../src/slack/blocks/reassign-modal.js';
import { renderResolveModal } from '../../src/slack/blocks/resolve-modal.js';
import { renderStatusList, renderWorkflowStatus, type WorkflowStatusRow } from '../../src/slack/blocks/status.js';
import type { Block } from '../../src/slack/blocks/types.js';
import { ACTION, VIEW } from '../../src/slack/blocks/ids.js';

const NOW = new Date('2026-03-10T09:05:00Z');
const OPENED = new Date('2026-03-10T02:03:00Z');

function card(overrides: Partial<AlertCard['alert']> = {}, rest: Partial<Omit<AlertCard, 'alert'>> = {}): AlertCard {
  return {
    alert: {
      id: 42,
      status: 'open',
      severity: 'warning',
      openedAt: OPENED,
      escalateAt: new Date('2026-03-10T03:03:00Z'),
      escalatedAt: null,
      resolvedAt: null,
      cadenceSeconds: 300,
      consecutiveFailures: 3,
      lastError: 'connection refused to warehouse:5432',
      errorGroup: 'e3b0c442',
      errorGroupCount: 3,
      stage: 'load',
      ownerTeam: 'engineering',
      ownerUser: null,
      ownerNote: null,
      acknowledgedBy: null,
      silencedUntil: null,
      silencedBy: null,
      silenceReason: null,
      ...overrides,
    },
    workflow: { id: 7, name: 'quality-check', cron: '*/5 * * * *', timezone: 'Europe/Berlin' },
    tenant: { id: 'acme', name: 'Acme Analytics' },
    lastRun: { id: 981, logExcerpt: 'step 3/4: load\nERROR connection refused', logUrl: null, stage: 'load' },
    hasLauncher: true,
    ...rest,
  };
}

/** Every mrkdwn/plain text in a surface, for "nothing unsafe anywhere" assertions. */
function texts(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(texts);
  if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    const own = typeof o.text === 'string' ? [o.text] : [];
    return [...own, ...Object.entries(o).filter(([k]) => k !== 'text' || typeof o.text !== 'string').flatMap(([, v]) => texts(v))];
  }
  return [];
}

function actionIds(blocks: Block[]): string[] {
  return blocks.filter((b) => b.type === 'actions').flatMap((b) => (b.elements as { action_id: string }[]).map((e) => e.action_id));
}

describe('alert root', () => {
  it("shows the error group's first and latest occurrence beside its count (DESIGN, core idea 9)", () => {
    const m = renderAlertRoot(card({ errorGroupFirstAt: OPENED, errorGroupLastAt: new Date('2026-03-10T09:00:00Z') }), NOW);
    const field = texts(m.blocks).find((x) => x.startsWith('*Error group*'));
    expect(field).toBe(`*Error group*\n\`e3b0c442\` (3×, first <!date^${OPENED.getTime() / 1000}^{date_short_pretty} {time}|2026-03-10 02:03 UTC>, latest <!date^${Date.parse('2026-03-10T09:00:00Z') / 1000}^{date_short_pretty} {time}|2026-03-10 09:00 UTC>)`);
  });

  it('open warning, unowned: header, fields and the full button row', () => {
    const m = renderAlertRoot(card(), NOW);
    expect(m).toMatchSnapshot();
    expect(m.blocks[0]).toMatchObject({ type: 'header', text: { text: '⚠️ Warning (open): Acme Analytics / quality-check, 3 failures' } });
    expect(actionIds(m.blocks)).toEqual([ACTION.takeOwnership, ACTION.reassign, ACTION.resolve, ACTION.silence, ACTION.runNow, ACTION.history]);
    const actions = m.blocks.find((b) => b.type === 'actions') as unknown as { elements: { value?: string; options?: { value: string }[] }[] };
    expect(actions.elements[0]!.value).toBe('42');
    expect(actions.elements[3]!.options!.map((o) => o.value)).toEqual(['42:1h', '42:4h', '42:24h', '42:resolved']);
    expect(m.text).toContain('connection refused');
    expect(JSON.stringify(m.blocks)).toContain('every 5 minutes');
    expect(JSON.stringify(m.blocks)).toContain('Europe/Berlin');
  });

  it('critical, owned and silenced until a time: Release and Unsilence replace their buttons', () => {
    const m = renderAlertRoot(
      card({ severity: 'critical', escalatedAt: new Date('2026-03-10T03:03:00Z'), ownerUser: 'U0ALICE', acknowledgedBy: 'U0ALICE', silencedBy: 'U0ALICE', silencedUntil: new Date('2026-03-10T13:05:00Z'), silenceReason: 'vendor outage' }),
      NOW,
    );
    expect(m).toMatchSnapshot();
    expect(m.blocks[0]).toMatchObject({ text: { text: '🚨 Critical (silenced): Acme Analytics / quality-check, 3 failures' } });
    expect(actionIds(m.blocks)).toEqual([ACTION.release, ACTION.reassign, ACTION.resolve, ACTION.unsilence, ACTION.runNow, ACTION.history]);
    expect(JSON.stringify(m.blocks)).toContain('<@U0ALICE>');
  });

  it('silenced until resolved, handed to the customer with a note', () => {
    const m = renderAlertRoot(card({ ownerTeam: 'customer', ownerUser: 'U0CUST', ownerNote: 'credentials expired on your side', silencedBy: 'U0BOB', silencedUntil: null }), NOW);
    expect(m).toMatchSnapshot();
    expect(JSON.stringify(m.blocks)).toContain('until resolved');
    expect(JSON.stringify(m.blocks)).toContain('customer · <@U0CUST>');
  });

  it('an expired silence is not shown as silenced', () => {
    const m = renderAlertRoot(card({ silencedBy: 'U0BOB', silencedUntil: new Date('2026-03-10T09:00:00Z') }), NOW);
    expect(actionIds(m.blocks)).toContain(ACTION.silence);
    expect(m.blocks[0]).toMatchObject({ text: { text: expect.stringContaining('(open)') } });
  });

  it('resolved: the root shrinks to its outcome, says "Resolved after 7h 02m" (the compact form of DESIGN.md) once, and only History remains', () => {
    const resolution = { kind: 'resolved', actor: null, at: NOW, data: { runId: 78, successes: 1 } };
    const m = renderAlertRoot(card({ status: 'resolved', resolvedAt: new Date('2026-03-10T09:05:00Z'), ownerUser: 'U0ALICE' }, { resolution }), NOW);
    expect(m).toMatchSnapshot();
    expect(m.blocks.map((b) => b.type)).toEqual(['header', 'section', 'context', 'actions']);
    expect(m.blocks[1]).toMatchObject({ text: { text: ':white_check_mark: Recovered: run #78 succeeded. Resolved after 7h 02m.' } });
    expect(m.text).toBe('Acme Analytics / quality-check: Recovered: run #78 succeeded. Resolved after 7h 02m.');
    expect(JSON.stringify(m).match(/Resolved after/g)).toHaveLength(2); // once in the blocks, once in the fallback
    expect(JSON.stringify(m.blocks)).not.toContain('Last error');
    expect(actionIds(m.blocks)).toEqual([ACTION.history]);
  });

  it('resolved by hand: the root names who resolved it and carries the note', () => {
    const resolution = { kind: 'resolved', actor: 'U0BOB', at: NOW, data: { by: 'hand', note: 'fixed upstream' } };
    const m = renderAlertRoot(card({ status: 'resolved', resolvedAt: NOW }, { resolution }), NOW);
    expect(m.blocks[1]).toMatchObject({ text: { text: ':white_check_mark: <@U0BOB> resolved the alert by hand after 7h 02m.\n> fixed upstream' } });
  });

  it('the fallback text of an open root is plain language naming tenant and workflow', () => {
    const m = renderAlertRoot(card({ lastError: 'boom <!channel>' }), NOW);
    expect(m.text).toBe('Warning (open): Acme Analytics / quality-check, 3 failures. Last error: boom &lt;!channel&gt;');
  });

  it('a 10,000-character error with <!channel>, mentions and links renders safely within limits', () => {
    const evil = `<!channel> <!here> <@U0EVIL> <https://evil.example|click me> & ${'x'.repeat(4000)} \`\`\` escape ${'<!channel>'.repeat(500)}`.slice(0, 10_000).padEnd(10_000, 'y');
    const m = renderAlertRoot(card({ lastError: evil, stage: '<!channel> stage' }, { lastRun: { id: 1, logExcerpt: evil, logUrl: 'javascript:<!channel>', stage: null } }), NOW);
    const all = texts(m.blocks).concat(m.text);
    for (const t of all) {
      expect(t).not.toMatch(/<!channel>|<!here>|<@U0EVIL>|<https:\/\/evil/);
    }
    expect(m.blocks.length).toBeLessThanOrEqual(LIMITS.messageBlocks);
    for (const b of m.blocks) {
      const text = (b as { text?: { text: string } }).text?.text;
      if (text) expect(text.length).toBeLessThanOrEqual(b.type === 'header' ? LIMITS.headerText : LIMITS.sectionText);
    }
    expect(m.text.length).toBeLessThanOrEqual(LIMITS.fallbackText);
    const errorBlock = m.blocks.find((b) => JSON.stringify(b).includes('*Last error*')) as unknown as { text: { text: string } };
    expect(errorBlock.text.text).toContain(TRUNCATION_MARKER);
    expect(errorBlock.text.text).toContain('&lt;!channel&gt;');
    // The fence cannot be closed early by the error text.
    expect(errorBlock.text.text.match(/```/g)).toHaveLength(2);
  });

  it('every mrkdwn text is verbatim: a URL, #channel or bare @channel in run text is not linked or parsed by Slack', () => {
    // Escaping stops `<…>` tokens; a plain `https://…`, `#general` or `@channel` is what Slack's own
    // automatic parsing would turn into a link or a mention unless the text object says verbatim.
    const plainHostile = 'see https://evil.example/login and #general, @channel @here @everyone';
    const mrkdwnObjects = (node: unknown): Record<string, unknown>[] => {
      if (Array.isArray(node)) return node.flatMap(mrkdwnObjects);
      if (!node || typeof node !== 'object') return [];
      const o = node as Record<string, unknown>;
      return [...(o.type === 'mrkdwn' ? [o] : []), ...Object.values(o).flatMap(mrkdwnObjects)];
    };
    const member = { alertId: 1, tenant: { id: 'acme', name: plainHostile }, workflow: 'wf', severity: 'warning' as const, status: 'open' as const, consecutiveFailures: 3, ownerUser: null, silenced: false, lastError: plainHostile, ownThread: false };
    const surfaces = [
      renderAlertRoot(card({ lastError: plainHostile, stage: plainHostile, ownerNote: plainHostile }, { tenant: { id: 'acme', name: plainHostile } }), NOW),
      renderAlertRoot(card({ status: 'resolved', resolvedAt: NOW }, { resolution: { kind: 'resolved', actor: 'U0BOB', at: NOW, data: { by: 'hand', note: plainHostile } } }), NOW),
      renderAlertReply({ kind: 'silenced', actor: 'U0BOB', at: NOW, data: { until: 'resolved', reason: plainHostile } }, card(), NOW),
      renderHistory('nightly', [{ runId: 3, tick: OPENED, trigger: 'schedule', status: 'failed', attempts: 1, startedAt: OPENED, finishedAt: NOW, error: plainHostile, outcomeNote: plainHostile }]),
      renderHome({ tenants: [{ id: 'acme', name: plainHostile, alerts: [] }], dead: [{ id: 9, destination: 'webhook', tenantId: 'acme', workflowName: 'wf', lastError: plainHostile, createdAt: OPENED }] }, NOW),
      renderStormMessage({ storm: { id: 1, startedAt: OPENED, endedAt: null }, members: [member] }),
      renderResolveModal({ alertId: 42, workflowName: 'nightly', tenantName: plainHostile, channel: 'CACME', messageTs: null }),
      renderReassignModal({ alertId: 42, workflowName: 'nightly', tenantName: plainHostile, ownerTeam: 'engineering', ownerUser: null, ownerNote: plainHostile, channel: 'CACME', messageTs: null }),
    ];
    const objects = surfaces.flatMap((m) => mrkdwnObjects(m.blocks));
    expect(objects.length).toBeGreaterThan(20);
    expect(JSON.stringify(objects)).toContain('https://evil.example/login');
    for (const o of objects) expect(o).toMatchObject({ verbatim: true });
  });
});

describe('replies', () => {
  const base = { at: NOW, actor: 'U0ALICE' as string | null };
  const cases: [string, Record<string, unknown>, Partial<AlertCard['alert']>][] = [
    ['opened', {}, {}],
    ['escalated', {}, { severity: 'critical' }],
    ['error_group_changed', { errorGroup: 'f00d', previous: 'e3b0c442', error: 'disk full <!channel>' }, {}],
    ['owner_changed', { fromTeam: 'engineering', fromUser: null, toTeam: 'engineering', toUser: 'U0ALICE' }, { ownerUser: 'U0ALICE' }],
    ['owner_changed', { fromTeam: 'engineering', fromUser: 'U0ALICE', toTeam: 'engineering', toUser: null }, {}],
    ['owner_changed', { fromTeam: 'engineering', fromUser: 'U0ALICE', toTeam: 'customer', toUser: 'U0CUST', note: 'your <@U0X> creds' }, { ownerTeam: 'customer', ownerUser: 'U0CUST' }],
    ['silenced', { until: '2026-03-10T13:05:00.000Z', reason: 'vendor' }, {}],
    ['silenced', { until: null }, {}],
    ['unsilenced', { why: 'unsilenced', summary: { counts: [{ kind: 'escalated', count: 1 }, { kind: 'failure_recorded', count: 4 }], severity: 'critical', consecutiveFailures: 7 } }, {}],
    ['unsilenced', { why: 'unsilenced', summary: { counts: { failure_recorded: 1 } } }, {}],
    ['unsilenced', { why: 'expired', summary: { counts: {} } }, {}],
    ['run_requested', { runId: 77 }, {}],
    ['run_finished', { runId: 77, status: 'failed', error: 'exit 1' }, {}],
    ['run_finished', { runId: 78, status: 'succeeded' }, {}],
    ['resolved', { runId: 78 }, { status: 'resolved', resolvedAt: new Date('2026-03-10T09:05:00Z') }],
    ['flapping', { transitions: 4, window: 10, recoverAfter: 3 }, {}],
    ['resolved', { runId: 79, successes: 3, recoverAfter: 3 }, { status: 'resolved', resolvedAt: new Date('2026-03-10T09:05:00Z') }],
  ];
  it.each(cases)('%s %j', (kind, data, alert) => {
    const m = renderAlertReply({ ...base, kind, data }, card(alert), NOW);
    expect(m).toMatchSnapshot();
    expect(m.text.length).toBeGreaterThan(0);
    for (const t of texts(m.blocks)) expect(t).not.toMatch(/<!channel>|<@U0X>/);
  });

  it('names the people in ownership and silence replies', () => {
    expect(renderAlertReply({ ...base, kind: 'owner_changed', data: { fromTeam: 'engineering', fromUser: null, toTeam: 'engineering', toUser: 'U0ALICE' } }, card(), NOW).text).toBe(
      'Acme Analytics / quality-check: <@U0ALICE> took ownership. Escalation stopped.',
    );
    expect(renderAlertReply({ ...base, kind: 'silenced', data: { until: null } }, card(), NOW).text).toContain('until it resolves');
    expect(renderAlertReply({ ...base, kind: 'run_requested', data: { runId: 77 } }, card(), NOW).text).toBe('Acme Analytics / quality-check: <@U0ALICE> started run #77.');
  });

  it('the opened reply follows severity; held events read as words with right plurals', () => {
    expect(renderAlertReply({ ...base, kind: 'opened', data: { severity: 'critical', consecutiveFailures: 1 } }, card(), NOW).blocks[0]).toMatchObject({
      text: { text: ':rotating_light: Critical alert opened: *quality-check* has 1 consecutive failure.' },
    });
    const summary = { counts: [{ kind: 'escalated', count: 1 }, { kind: 'failure_recorded', count: 4 }], severity: 'critical', consecutiveFailures: 1 };
    expect(renderAlertReply({ ...base, kind: 'unsilenced', data: { why: 'unsilenced', summary } }, card(), NOW).text).toBe(
      'Acme Analytics / quality-check: <@U0ALICE> unsilenced the alert. While silenced: 1 escalation, 4 failures recorded. It is now critical with 1 consecutive failure.',
    );
  });

  it('a flapping note says how often it changed and how many successes in a row will resolve it; the recovery says how many it took', () => {
    expect(renderAlertReply({ ...base, kind: 'flapping', actor: null, data: { transitions: 4, window: 10, recoverAfter: 3 } }, card(), NOW).text).toBe(
      'Acme Analytics / quality-check: Flapping: 4 changes between success and failure in the last 10 runs. It will resolve after 3 successes in a row.',
    );
    const resolved = card({ status: 'resolved', resolvedAt: new Date('2026-03-10T09:05:00Z') });
    expect(renderAlertReply({ ...base, kind: 'resolved', data: { runId: 79, successes: 3 } }, resolved, NOW).text).toContain('run #79 succeeded (3 successes in a row).');
    expect(renderAlertReply({ ...base, kind: 'resolved', data: { runId: 79, successes: 1 } }, resolved, NOW).text).not.toMatch(/in a row/);
  });
});

describe('status, history, home and the reassign modal', () => {
  const row = (over: Partial<WorkflowStatusRow>): WorkflowStatusRow => ({
    tenantId: 'acme',
    name: 'nightly',
    cron: '0 2 * * *',
    timezone: 'UTC',
    paused: false,
    monitoring: true,
    mode: 'managed',
    nextTickAt: new Date('2026-03-11T02:00:00Z'),
    lastRun: { status: 'succeeded', finishedAt: OPENED },
    openAlert: null,
    ...over,
  });
  const history: HistoryRow[] = [
    { runId: 3, tick: new Date('2026-03-10T02:00:00Z'), trigger: 'schedule', status: 'failed', attempts: 4, startedAt: OPENED, finishedAt: new Date(OPENED.getTime() + 90_000), error: 'boom <!channel>', outcomeNote: null },
    { runId: 2, tick: new Date('2026-03-09T02:00:00Z'), trigger: 'schedule', status: 'succeeded', attempts: 2, startedAt: OPENED, finishedAt: OPENED, error: null, outcomeNote: 'recovered on attempt 2' },
  ];

  it('status list', () => {
    const m = renderStatusList([row({}), row({ name: 'check', cron: '*/5 * * * *', openAlert: { id: 42, severity: 'critical', ownerUser: null, silenced: false, consecutiveFailures: 9 } })], 'Acme');
    expect(m).toMatchSnapshot();
  });

  it('workflow detail', () => {
    const m = renderWorkflowStatus({ row: row({}), tenantName: 'Acme', cadenceSeconds: 86_400, policy: { retries: 3, alertAfter: 1, firstSeverity: 'critical' }, runs: history, alert: card() });
    expect(m).toMatchSnapshot();
  });

  it('workflow detail: the policy line says when failing intermittently opens an alert before the count in a row does', () => {
    const policyLine = (alertAfter: number) =>
      JSON.stringify(renderWorkflowStatus({ row: row({}), tenantName: 'Acme', cadenceSeconds: 300, policy: { retries: 0, alertAfter, firstSeverity: 'warning' }, runs: [], alert: null }).blocks).match(/Policy: [^"\\]*/)![0];
    expect(policyLine(3)).toBe('Policy: 0 retries per tick, alert after 3 confirmed failures in a row (or 5 of the last 10 while it flaps), opens as warning');
    expect(policyLine(1)).toBe('Policy: 0 retries per tick, alert after 1 confirmed failure, opens as warning');
    expect(policyLine(9)).toBe('Policy: 0 retries per tick, alert after 9 confirmed failures in a row, opens as warning');
  });

  it('workflow detail in another zone: the next tick on the workflow\'s clock, named, beside the reader\'s own time; an Etc/GMT zone with its real offset', () => {
    const kathmandu = renderWorkflowStatus({ row: row({ timezone: 'Asia/Kathmandu', nextTickAt: new Date('2026-03-10T20:15:00Z') }), tenantName: 'Acme', cadenceSeconds: 86_400, policy: { retries: 3, alertAfter: 1, firstSeverity: 'critical' }, runs: [], alert: null });
    expect(JSON.stringify(kathmandu.blocks)).toContain('next tick 2026-03-11 02:00 Asia/Kathmandu (<!date^1773173700^{date_short_pretty} {time}|2026-03-10 20:15 UTC> your time)');
    const gmt5 = renderWorkflowStatus({ row: row({ timezone: 'Etc/GMT+5', nextTickAt: new Date('2026-03-11T07:00:00Z') }), tenantName: 'Acme', cadenceSeconds: 86_400, policy: { retries: 3, alertAfter: 1, firstSeverity: 'critical' }, runs: [], alert: null });
    expect(JSON.stringify(gmt5.blocks)).toContain('Etc/GMT+5 (UTC−05:00)), managed, next tick 2026-03-11 02:00 Etc/GMT+5 (UTC−05:00) (');
    const root = renderAlertRoot(card({}, { workflow: { id: 7, name: 'quality-check', cron: '0 2 * * *', timezone: 'Etc/GMT+5' } }), NOW);
    expect(JSON.stringify(root.blocks)).toContain('`0 2 * * *`, Etc/GMT+5 (UTC−05:00))');
  });

  it('history escapes errors and shows attempts', () => {
    const m = renderHistory('nightly', history);
    expect(m).toMatchSnapshot();
    expect(JSON.stringify(m)).not.toContain('<!channel>');
    expect(JSON.stringify(m.blocks)).toContain('4 attempts');
  });

  it('error text with backticks or line breaks cannot end its inline code span (history, status, home, storm)', () => {
    const error = 'psql: `select * from t` failed\n  at line 2';
    // Every backtick in a line is a code-span delimiter: exactly the span's two, and the text still there.
    const spansIntact = (text: string) => {
      const line = text.split('\n').find((l) => l.includes('select')) ?? '';
      expect(line.match(/`/g)).toHaveLength(2);
      expect(line).toMatch(/`psql: .select \* from t. failed at line 2`/);
    };
    const texts = (m: { blocks: unknown[] }) => JSON.parse(JSON.stringify(m.blocks)).flatMap((b: { text?: { text: string }; elements?: { text?: string }[] }) => [b.text?.text ?? '', ...(b.elements ?? []).map((e) => e.text ?? '')]).join('\n');
    spansIntact(texts(renderHistory('nightly', [{ ...history[0]!, error }])));
    const detail = renderWorkflowStatus({ row: row({}), tenantName: 'Acme', cadenceSeconds: 86_400, policy: { retries: 3, alertAfter: 1, firstSeverity: 'critical' }, runs: [], alert: card({ lastError: error }) });
    spansIntact(texts(detail));
    spansIntact(texts(renderHome({ tenants: [], dead: [{ id: 9, destination: 'webhook', tenantId: 'acme', workflowName: 'wf', lastError: error, createdAt: OPENED }] }, NOW)));
    const member = { alertId: 1, tenant: { id: 'acme', name: 'Acme' }, workflow: 'wf', severity: 'warning' as const, status: 'open' as const, consecutiveFailures: 3, ownerUser: null, silenced: false, lastError: error, ownThread: false };
    spansIntact(texts(renderStormMessage({ storm: { id: 1, startedAt: OPENED, endedAt: null }, members: [member] })));
  });

  it('home groups alerts by tenant and lists dead notifications; stays within 100 blocks', () => {
    const alerts = Array.from({ length: 3 }, (_, i) => ({ id: i, workflowName: `wf-${i}`, severity: i ? 'warning' : 'critical', openedAt: OPENED, consecutiveFailures: 3, ownerTeam: 'engineering', ownerUser: i === 1 ? 'U0ALICE' : null, silenced: i === 2 ? { until: 'resolved' as const } : null }));
    const home = renderHome({ tenants: [{ id: 'acme', name: 'Acme', alerts }, { id: 'globex', name: 'Globex', alerts: [] }], dead: [{ id: 9, destination: 'slack:CGONE', tenantId: 'acme', workflowName: 'wf-0', lastError: 'channel_not_found', createdAt: OPENED }] }, NOW);
    expect(home).toMatchSnapshot();
    const big = renderHome({ tenants: Array.from({ length: 150 }, (_, i) => ({ id: `t${i}`, name: `T${i}`, alerts })), dead: [] }, NOW);
    expect(big.blocks.length).toBe(LIMITS.surfaceBlocks);
    expect(JSON.stringify(big.blocks[big.blocks.length - 1])).toMatch(/more not shown/);
  });

  it('reassign modal: the metadata names the root clicked', () => {
    const v = renderReassignModal({ alertId: 42, workflowName: 'nightly', tenantName: 'Acme', ownerTeam: 'engineering', ownerUser: null, channel: 'CACME', messageTs: '1700000000.000100' });
    expect(v).toMatchSnapshot();
    expect(v.callback_id).toBe(VIEW.reassign);
    expect(JSON.parse(v.private_metadata as string)).toEqual({ alertId: 42, channel: 'CACME', messageTs: '1700000000.000100' });
  });

  it('resolve modal: the note is a required input; the metadata names the root clicked', () => {
    const v = renderResolveModal({ alertId: 42, workflowName: 'nightly', tenantName: 'Acme', channel: 'CACME', messageTs: '1700000000.000100' });
    expect(v).toMatchSnapshot();
    expect(v.callback_id).toBe(VIEW.resolve);
    expect(JSON.stringify(v.blocks)).not.toContain('"optional":true');
    expect(JSON.parse(v.private_metadata as string)).toEqual({ alertId: 42, channel: 'CACME', messageTs: '1700000000.000100' });
  });
});

describe('text helpers', () => {
  it('escapes the three characters mrkdwn gives meaning to', () => {
    expect(escapeMrkdwn('<!channel> & <@U1|x>')).toBe('&lt;!channel&gt; &amp; &lt;@U1|x&gt;');
  });
  it('never splits an entity when cutting', () => {
    const out = safeText('&'.repeat(100), 40);
    expect(out.length).toBeLessThanOrEqual(40);
    expect(out.replace(TRUNCATION_MARKER, '')).toMatch(/^(&amp;)+$/);
  });
  it('words for durations and cadences', () => {
    expect(formatDuration(25_320_000)).toBe('7 hours 2 minutes');
    expect(cadenceInWords(300)).toBe('every 5 minutes');
    expect(cadenceInWords(86_400)).toBe('daily');
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('soon')).toBeUndefined();
  });
});
