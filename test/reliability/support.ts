import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import type { RecordingSlackApi } from '../../src/replay/recording-slack-api.js';

/** The tables whose content a refused request must leave exactly as it was. */
const LEDGER_TABLES = ['tenants', 'workflows', 'runs', 'alerts', 'alert_events', 'notifications', 'alert_threads'] as const;

/**
 * A fingerprint of everything a request could have changed: every row of the
 * ledger tables (as text, so any column counts) and every message Slack holds.
 * Two equal fingerprints mean nothing was written anywhere.
 */
export async function fingerprint(db: Db, slack?: RecordingSlackApi): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of LEDGER_TABLES) {
    const { rows } = await sql<{ n: number; digest: string }>`
      select count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as digest from ${sql.table(table)} x
    `.execute(db);
    out[table] = `${rows[0]!.n}:${rows[0]!.digest}`;
  }
  if (slack) {
    out.slackMessages = JSON.stringify(slack.messages());
    out.slackViews = String(slack.openedViews.length);
  }
  return out;
}


export { eventually } from '../helpers/eventually.js';
