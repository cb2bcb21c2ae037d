import { describe, expect, it } from 'vitest';
import { renderHome } from '../../src/slack/blocks/home.js';
import { slackDate, userMention } from '../../src/slack/blocks/format.js';
import { capBlocks, codeBlock, cutMrkdwn, LIMITS, lineSections, mrkdwn, omittedNote, TRUNCATION_MARKER, withItems } from '../../src/slack/blocks/limits.js';
import type { Block } from '../../src/slack/blocks/types.js';

const AT = new Date('2026-03-10T09:05:00Z');

/** Whole markup only: every token that opens also closes. */
function markupIntact(text: string): void {
  const body = text.endsWith(TRUNCATION_MARKER) ? text.slice(0, -TRUNCATION_MARKER.length) : text;
  expect((body.match(/```/g) ?? []).length % 2).toBe(0);
  const outsideFences = body.replace(/```[\s\S]*?```/g, '');
  expect((outsideFences.match(/`/g) ?? []).length % 2).toBe(0);
  expect((outsideFences.match(/</g) ?? []).length).toBe((outsideFences.match(/>/g) ?? []).length);
  expect(outsideFences).not.toMatch(/<[^>]*$/);
  expect(body).not.toMatch(/&[a-z#0-9]*$/);
}

const TOKENS: [string, string][] = [
  ['a code span', '`connection refused to warehouse:5432`'],
  ['a date token', slackDate(AT)],
  ['a link', '<https://logs.example.com/run/981|open the log>'],
  ['a mention', userMention('U0ALICE')],
  ['an entity', '&amp;'],
];

describe('cutting mrkdwn at each Block Kit limit keeps markup whole', () => {
  const limits = Object.entries({ sectionText: LIMITS.sectionText, contextElementText: LIMITS.contextElementText, fallbackText: LIMITS.fallbackText, codeBlock: LIMITS.codeBlock });
  for (const [limit, max] of limits) {
    it.each(TOKENS)(`${limit} (${max}): the cut never lands inside %s`, (_, token) => {
      // Slide the token across the cut point: every offset must come out whole.
      for (let offset = -token.length - 2; offset <= 2; offset++) {
        const prefix = 'x'.repeat(max - TRUNCATION_MARKER.length + offset);
        const text = `${prefix}${token} and more text after it that does not fit`;
        const cut = cutMrkdwn(text, max);
        expect(cut.length).toBeLessThanOrEqual(max);
        expect(cut.endsWith(TRUNCATION_MARKER)).toBe(true);
        markupIntact(cut);
        // Either the whole token survives or none of it does.
        const tail = cut.slice(prefix.length, cut.length - TRUNCATION_MARKER.length);
        expect(tail === '' || tail.startsWith(token)).toBe(true);
      }
    });
  }

  it('a fenced block cut in its middle is closed again, without half an entity', () => {
    const text = `*Last error*\n${codeBlock('&'.repeat(5000), 6000)}`;
    const cut = cutMrkdwn(text, LIMITS.sectionText);
    expect(cut.length).toBeLessThanOrEqual(LIMITS.sectionText);
    expect(cut).toMatch(/(&amp;)+```… \[truncated\]$/);
    markupIntact(cut);
  });

  it('mrkdwn() applies the same cut', () => {
    const text = `${'y'.repeat(LIMITS.sectionText - 20)} ${slackDate(AT)}`;
    const out = mrkdwn(text).text;
    expect(out).not.toContain('<!date');
    expect(out.length).toBeLessThanOrEqual(LIMITS.sectionText);
  });
});

describe('"… N more not shown" counts items, not blocks', () => {
  it('list lines pack into sections without splitting a line, and the overflow counts the lines left out', () => {
    const lines = Array.from({ length: 500 }, (_, i) => `• item ${i} ${slackDate(AT)} \`${'z'.repeat(100)}\``);
    const sections = lineSections(lines);
    expect(sections.reduce((n, b) => n + ((b as unknown as { text: { text: string } }).text.text.split('\n').length), 0)).toBe(500);
    for (const b of sections) {
      const text = (b as unknown as { text: { text: string } }).text.text;
      expect(text.length).toBeLessThanOrEqual(LIMITS.sectionText);
      for (const line of text.split('\n')) expect(lines).toContain(line);
    }
    const header = withItems({ type: 'section', text: mrkdwn('*Items*') }, 0) as Block;
    const capped = capBlocks([header, ...sections], LIMITS.messageBlocks, omittedNote);
    expect(capped).toHaveLength(LIMITS.messageBlocks);
    const shown = capped.slice(1, -1).reduce((n, b) => n + (b as unknown as { text: { text: string } }).text.text.split('\n').length, 0);
    expect(JSON.stringify(capped[capped.length - 1])).toContain(`… ${500 - shown} more not shown`);
  });

  it('the App Home says how many alerts it left out', () => {
    const alerts = Array.from({ length: 30 }, (_, i) => ({ id: i, workflowName: `wf-${i}`, severity: 'warning', openedAt: AT, consecutiveFailures: 3, ownerTeam: 'engineering', ownerUser: null, silenced: null }));
    const home = renderHome({ tenants: Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, name: `T${i}`, alerts })), dead: [] }, AT);
    expect(home.blocks).toHaveLength(LIMITS.surfaceBlocks);
    const shownAlerts = JSON.stringify(home.blocks).match(/\*wf-\d+\*/g)!.length;
    expect(JSON.stringify(home.blocks[home.blocks.length - 1])).toContain(`… ${40 * 30 - shownAlerts} more not shown`);
  });
});
