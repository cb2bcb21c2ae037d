import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { LoopSpec } from '../../engine/runner.js';
import { slackDate } from '../blocks/format.js';
import { escapeMrkdwn, mrkdwn, safeText } from '../blocks/limits.js';
import { alertMetadata } from './metadata.js';
import type { SlackOutboxApi } from './slack-api.js';

/**
 * The end of a tenant-wide maintenance window with no alert thread to tell
 * (src/engine/maintenance-clock.ts leaves its summary in channel_note) goes
 * to the tenant's channel as one top-level message (a tenant in shadow: to the
 * platform channel, marked Shadow). A row is claimed (SKIP
 * LOCKED, marked at claim) so replicas post it once; a failure that may be
 * retried gives the claim back, anything else is logged and dropped: it is a
 * courtesy note, not an alert.
 */
export function createMaintenanceNotes(deps: Pick<Deps, 'db' | 'clock' | 'logger'> & { config?: Pick<Deps['config'], 'PLATFORM_CHANNEL'> }, api: SlackOutboxApi) {
  const log = deps.logger.child({ loop: 'slack-maintenance-notes' });
  const tick = async (): Promise<boolean> => {
    const now = deps.clock.now();
    const { rows } = await sql<{ id: number; tenantId: string; channelNote: Record<string, unknown>; channel: string | null; shadow: boolean }>`
      with claimed as (
        select id from maintenance_windows
        where channel_note is not null and channel_noted_at is null
        order by id limit 1
        for update skip locked
      )
      update maintenance_windows m set channel_noted_at = ${now}
      from claimed, tenants t
      where m.id = claimed.id and t.id = m.tenant_id
      returning m.id, m.tenant_id, m.channel_note, t.channel, t.shadow
    `.execute(deps.db);
    const row = rows[0];
    if (!row) return false;
    // A tenant in shadow is told nothing: its note goes to the audit destination (the platform channel), marked.
    const channel = row.shadow ? (deps.config?.PLATFORM_CHANNEL ?? null) : row.channel;
    if (!channel) return true;
    const text = `${row.shadow ? 'Shadow · ' : ''}${noteText(row.tenantId, row.channelNote)}`;
    const posted = await api.postMessage({
      channel,
      text,
      blocks: [{ type: 'section', text: mrkdwn(text) }],
      metadata: alertMetadata({ alertId: 0, tenant: row.tenantId, workflow: '', event: 'maintenance_ended', severity: 'warning', key: `maintenance:${row.id}` }),
    });
    if (!posted.ok) {
      log.warn({ windowId: row.id, error: posted.error, kind: posted.kind }, 'maintenance note not posted');
      if (posted.kind === 'rate_limited' || posted.kind === 'transient') {
        await deps.db.updateTable('maintenanceWindows').set({ channelNotedAt: null }).where('id', '=', row.id).execute();
      }
    }
    return true;
  };
  const loop: LoopSpec = { name: 'slack-maintenance-notes', intervalMs: 5_000, tick, wakeOn: [] };
  return { tick, loop };
}

function noteText(tenant: string, d: Record<string, unknown>): string {
  const num = (k: string) => (typeof d[k] === 'number' ? (d[k] as number) : 0);
  const endedAt = typeof d.endedAt === 'string' ? new Date(d.endedAt) : null;
  const reason = typeof d.reason === 'string' ? ` (${safeText(d.reason, 300)})` : '';
  return `Maintenance of *${escapeMrkdwn(tenant)}* ended${endedAt ? ` ${slackDate(endedAt)}` : ''}${reason}: ${num('failures')} failed and ${num('missed')} missed runs inside it, not counted.`;
}
