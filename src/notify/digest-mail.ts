import type { Config } from '../config/env.js';
import type { Db } from '../db/connect.js';
import { redactSecrets } from '../secrets.js';
import { smtpSender, type MailSender } from './transports/email.js';

/** What of a digest goes by email: src/slack/blocks/digest.ts makes it. */
export interface DigestMail {
  subject: string;
  plainText: string;
}

/** How a digest's mail went: messages accepted, and the refusals (redacted SMTP answers, one per destination that failed). */
export interface DigestMailResult {
  emailed: number;
  failed: string[];
}

/**
 * Mails a tenant's digest to each of its email destinations (one message per
 * destination, plain text). Each destination is tried whatever became of the
 * one before: a mailbox that refuses it (550, an address that left) or an
 * SMTP error keeps it from no other destination. Says how many were accepted
 * and what the others answered. Undefined without SMTP_URL (and no mailer
 * given): no digest email.
 */
export function digestMailer(
  deps: { db: Db; config: Pick<Config, 'SMTP_URL' | 'SMTP_FROM'> },
  mailer?: MailSender,
): ((tenantId: string, digest: DigestMail) => Promise<DigestMailResult>) | undefined {
  const sender = mailer ?? (deps.config.SMTP_URL ? smtpSender(deps.config.SMTP_URL) : undefined);
  if (!sender) return undefined;
  return async (tenantId, digest) => {
    const tenant = await deps.db.selectFrom('tenants').select('destinations').where('id', '=', tenantId).executeTakeFirst();
    const stored: unknown[] = Array.isArray(tenant?.destinations) ? tenant.destinations : [];
    const recipients = stored.flatMap((d) => {
      const dest = d as { kind?: unknown; to?: unknown };
      return dest.kind === 'email' && Array.isArray(dest.to) && dest.to.every((a) => typeof a === 'string') ? [dest.to as string[]] : [];
    });
    const result: DigestMailResult = { emailed: 0, failed: [] };
    for (const to of recipients) {
      try {
        await sender.sendMail({ from: deps.config.SMTP_FROM, to, subject: digest.subject, text: digest.plainText });
        result.emailed++;
      } catch (error) {
        result.failed.push(redactSecrets(error instanceof Error ? error.message : String(error), tenantId));
      }
    }
    return result;
  };
}
