import { describe, expect, it } from 'vitest';
import { helpText } from '../../src/slack/blocks/help.js';
import { parseSchedulerCommand } from '../../src/slack/listeners/commands/parse-command.js';

describe('parseSchedulerCommand', () => {
  it.each([
    ['until-resolved in one word', 'silence wf until-resolved', { kind: 'silence', workflow: 'wf', durationMs: null }],
    ['until resolved in two words, as people type it', 'silence wf until resolved', { kind: 'silence', workflow: 'wf', durationMs: null }],
    ['until resolved in two words, then a reason', 'silence wf Until Resolved vendor outage', { kind: 'silence', workflow: 'wf', durationMs: null, reason: 'vendor outage' }],
    ['1h30m', 'silence wf 1h30m', { kind: 'silence', workflow: 'wf', durationMs: 90 * 60_000 }],
  ] as const)('silence: %s', (_case, text, expected) => {
    expect(parseSchedulerCommand(text)).toEqual(expected);
  });

  it.each([
    ['a duration that is a mention', 'silence wf <!channel>'],
    ['an assignee that is a mention', 'reassign wf <!here>'],
    ['an unknown subcommand', '<!channel> wf'],
    ['a maintenance duration with markup', 'maintenance wf <@U0EVIL> reason'],
  ])('echoes what was typed escaped, so an answer never mentions or links: %s', (_case, text) => {
    const parsed = parseSchedulerCommand(text);
    expect(parsed.kind).toBe('usage');
    const message = (parsed as { message: string }).message;
    expect(message).not.toMatch(/<[!@]/);
    expect(message).toMatch(/&lt;[!@]/);
  });
});

describe('usage lines', () => {
  it('show their <placeholders> as typed: escaped, since Slack reads <…> as a link even inside backticks', () => {
    const help = helpText();
    expect(help).not.toMatch(/<(?!!date)/);
    expect(help).toContain('`/scheduler silence &lt;workflow&gt; &lt;duration: 30m, 4h, 1d | until-resolved&gt; [reason]`');
    const usage = parseSchedulerCommand('reassign wf').kind === 'usage' ? (parseSchedulerCommand('reassign wf') as { message: string }).message : '';
    expect(usage).toBe('Usage: `/scheduler reassign &lt;workflow&gt; &lt;@user&gt; [note]`');
  });
});
