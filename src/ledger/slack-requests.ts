import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

/**
 * Takes a Slack request's signature once across replicas: true the first
 * time, false for the same signature again. Signatures whose timestamp is
 * older than `keepSeconds` are deleted in the same statement: by then the
 * timestamp check refuses them anyway, so the table holds minutes of
 * requests, never more.
 */
export async function firstSlackReceipt(db: Db, signature: string, slackTs: number, nowSeconds: number, keepSeconds: number): Promise<boolean> {
  const { rows } = await sql<{ taken: number }>`
    with expired as (delete from slack_requests_seen where slack_ts < ${nowSeconds - keepSeconds})
    insert into slack_requests_seen (signature, slack_ts) values (${signature}, ${slackTs})
    on conflict (signature) do nothing
    returning 1 as taken
  `.execute(db);
  return rows.length === 1;
}
