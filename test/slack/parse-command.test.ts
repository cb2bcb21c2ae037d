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
    ['entities decoded once (Slack escapes & < > in command text)', 'silence wf 4h db &amp; cache &lt;3', { kind: 'silence', workflow: 'wf', durationMs: 4 * 3_600_000, reason: 'db & cache <3' }],
    ['a quoted name, straight or as clients autocorrect it', 'ack “wf”', { kind: 'ack', workflow: 'wf' }],
    ['a name in backticks', 'status `wf`', { kind: 'status', workflow: 'wf' }],
    ['zero-width characters pasted with a name', 'history wf\u200b', { kind: 'history', workflow: 'wf' }],
    ['mentions and links in a note as people read them', 'reassign wf <@U0BOB|bob> see <#C0OPS|ops> and <https://x.example/t/1|ticket>', { kind: 'reassign', workflow: 'wf', user: 'U0BOB', note: 'see #ops and https://x.example/t/1' }],
    ['a resolve note keeps its words', 'resolve wf   fixed by <@U0AL|al>', { kind: 'resolve', workflow: 'wf', note: 'fixed by @al' }],
  ] as const)('as Slack sends it: %s', (_case, text, expected) => {
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

describe('an unknown subcommand', () => {
  const message = (text: string) => (parseSchedulerCommand(text) as { message: string }).message;

  it.each([
    ['a typo', 'stauts wf', 'Did you mean `/scheduler status [workflow]`?'],
    ['a prefix', 'sta', 'Did you mean `/scheduler status [workflow]`?'],
    ['another tool\'s word for taking ownership', 'take wf', 'Did you mean `/scheduler ack &lt;workflow&gt;`?'],
    ['another tool\'s word for silencing', 'snooze wf 1h', 'Did you mean `/scheduler silence &lt;workflow&gt;'],
  ])('is answered with what it most likely meant, and not acted on: %s', (_case, text, hint) => {
    expect(parseSchedulerCommand(text).kind).toBe('usage');
    expect(message(text)).toContain(hint);
  });

  it('far from every subcommand: pointed at help', () => {
    expect(message('xyzzyplugh wf')).toBe('Unknown subcommand "xyzzyplugh". Try `/scheduler help`.');
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
