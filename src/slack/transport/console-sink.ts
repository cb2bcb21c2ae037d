import type { SlackOutboxApi } from './slack-api.js';

/**
 * With no Slack credentials the bot still runs and shows what it would post:
 * roots flush left, replies indented under their root, updates marked. A
 * newcomer sees the thread structure without creating a Slack app.
 */
export function consoleOutboxApi(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): SlackOutboxApi {
  let seq = 0;
  const roots = new Map<string, string>();
  const ts = () => `console.${String(++seq).padStart(6, '0')}`;
  const firstLine = (text: string) => plain(text).split('\n')[0]!.slice(0, 300);
  return {
    mode: 'console',
    async postMessage(a) {
      const id = ts();
      if (a.threadTs) {
        write(`[slack #${a.channel}]   ↳ ${plain(a.text).replace(/\n/g, '\n[slack #' + a.channel + ']     ')}`);
      } else {
        roots.set(id, a.text);
        write(`[slack #${a.channel}] ● ${plain(a.text)}   (thread ${id}, key ${a.metadata.event_payload.key})`);
      }
      return { ok: true, ts: id };
    },
    async updateMessage(a) {
      write(`[slack #${a.channel}] ✎ root ${a.ts} now reads: ${firstLine(a.text)}`);
      return { ok: true };
    },
    // Nothing printed can be lost, so an unknown outcome never happens here.
    async history() {
      return { ok: true, messages: [] };
    },
    async replies() {
      return { ok: true, messages: [] };
    },
    async publishHome() {
      return { ok: true };
    },
    // No token to refuse: a workspace held for refused credentials (a token removed, the bot restarted without one) is released.
    async authTest() {
      return { ok: true };
    },
  };
}

/**
 * A terminal is not Slack: show the escaped text as a person would read it in
 * the client (the entities decoded), with control characters made visible so
 * untrusted run output cannot move the cursor or clear the screen.
 */
function plain(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f\u009b]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
