import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import type { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';

/**
 * A scenario's evidence for a post-mortem (only with CHAOS_LOG_DIR), written
 * before the verdict: the Slack stand-in's log (every call with its outcome
 * and the key it carried; every message it holds) and the outbox rows, so a
 * "duplicated", "lost" or "misordered" count can be traced to its messages.
 * One JSON line each: `slack-<scenario>.log` and `outbox-<scenario>.log`.
 */
export async function dumpEvidence(scenario: string, db: Db, slack: RecordingSlackApi): Promise<void> {
  const dir = process.env.CHAOS_LOG_DIR;
  if (!dir) return;
  const name = scenario.replace(/[^a-z]+/g, '-');
  const key = (m: { metadata?: { event_payload?: Record<string, unknown> } }) => m.metadata?.event_payload?.key;
  const calls = slack.calls.map((c) => ({ seq: c.seq, at: c.at, method: c.method, channel: c.channel, ts: c.ts, threadTs: c.threadTs, key: key(c), outcome: c.outcome }));
  const stored = slack.messages().map((m) => ({ stored: true, channel: m.channel, ts: m.ts, threadTs: m.threadTs, key: key(m), updates: m.updates }));
  await writeFile(join(dir, `slack-${name}.log`), [...calls, ...stored].map((l) => JSON.stringify(l)).join('\n') + '\n');
  const { rows } = await sql<Record<string, unknown>>`
    select n.id, n.idempotency_key as key, n.status, n.attempts, n.last_error, n.result, n.created_at, n.sent_at, e.kind, e.alert_id
    from notifications n join alert_events e on e.id = n.event_id order by n.id
  `.execute(db);
  await writeFile(join(dir, `outbox-${name}.log`), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
}
