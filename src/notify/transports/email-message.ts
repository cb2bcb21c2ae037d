import { createHash } from 'node:crypto';
import type { Severity } from '../../db/schema.js';
import { cutText } from '../../domain/text.js';
import { severityWord } from '../alert-view.js';
import type { AlertFacts } from './alert-facts.js';

/** Headers and bodies of one alert email. Pure. */
export interface EmailMessage {
  subject: string;
  messageId: string;
  inReplyTo?: string;
  references?: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

export const IDEMPOTENCY_HEADER = 'X-Scheduler-Idempotency-Key';

/** Longest untrusted text put in a body; a run's log can be far longer. */
const MAX_DETAIL = 4000;

/**
 * A Message-ID that is a function of the idempotency key: a resend after an
 * unknown outcome carries the same id, which is what receiving systems
 * deduplicate on, and what every later message of the thread refers to.
 */
export function messageIdFor(key: string, domain: string): string {
  return `<${createHash('sha256').update(key).digest('hex').slice(0, 40)}@${domain}>`;
}

/** The domain of the From address (`Bot <bot@example.com>` → example.com), for Message-IDs. */
export function domainOf(from: string): string {
  const m = /@([A-Za-z0-9.-]+)>?\s*$/.exec(from.trim());
  return m ? m[1]!.toLowerCase() : 'scheduler-bot.invalid';
}

export interface EmailInput {
  facts: AlertFacts;
  tenantName: string;
  workflowName: string;
  alertId: number;
  event: string;
  idempotencyKey: string;
  /** The Message-ID of the destination's first message for this alert; absent when this one is it. */
  rootMessageId?: string;
  /** The severity the thread started with: the subject never changes within a thread, so clients that group by subject keep it together. */
  threadSeverity: Severity;
  domain: string;
}

export function renderAlertEmail(input: EmailInput): EmailMessage {
  const { facts } = input;
  const base = `[${severityWord(input.threadSeverity)}] ${oneLine(input.tenantName)} / ${oneLine(input.workflowName)} (alert #${input.alertId})`;
  const subject = input.rootMessageId ? `Re: ${base}` : base;

  const text = [
    facts.headline,
    '',
    facts.eventLine,
    ...(facts.eventDetail ? ['', indent(cap(facts.eventDetail))] : []),
    '',
    ...facts.fields.map((f) => `${f.label}: ${f.value}`),
    ...(facts.lastError ? ['', 'Last error:', indent(cap(facts.lastError))] : []),
    ...(facts.logExcerpt ? ['', 'Log:', indent(cap(facts.logExcerpt))] : []),
    ...(facts.logUrl ? ['', `Full log: ${facts.logUrl}`] : []),
    '',
    '-- ',
    `scheduler-bot · ${input.event} · ${input.idempotencyKey}`,
  ].join('\n');

  const rows = facts.fields.map((f) => `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(f.label)}</th><td>${escapeHtml(f.value)}</td></tr>`).join('');
  const pre = (s: string) => `<pre style="white-space:pre-wrap;background:#f6f8fa;padding:8px">${escapeHtml(cap(s))}</pre>`;
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<h2 style="margin:0 0 8px">${escapeHtml(facts.headline)}</h2>`,
    `<p>${escapeHtml(facts.eventLine)}</p>`,
    facts.eventDetail ? pre(facts.eventDetail) : '',
    `<table>${rows}</table>`,
    facts.lastError ? `<h3>Last error</h3>${pre(facts.lastError)}` : '',
    facts.logExcerpt ? `<h3>Log</h3>${pre(facts.logExcerpt)}` : '',
    facts.logUrl ? `<p><a href="${escapeHtml(facts.logUrl)}">Full log</a></p>` : '',
    `<p style="color:#888;font-size:small">scheduler-bot · ${escapeHtml(input.event)} · ${escapeHtml(input.idempotencyKey)}</p>`,
    '</body></html>',
  ].join('');

  return {
    subject,
    messageId: messageIdFor(input.idempotencyKey, input.domain),
    ...(input.rootMessageId ? { inReplyTo: input.rootMessageId, references: input.rootMessageId } : {}),
    text,
    html,
    headers: {
      [IDEMPOTENCY_HEADER]: input.idempotencyKey,
      'X-Scheduler-Alert': String(input.alertId),
      'X-Scheduler-Event': input.event,
      // Tells vacation responders and ticket systems not to answer.
      'Auto-Submitted': 'auto-generated',
    },
  };
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Header values are one line: a newline in a workflow name must not start a header of its own. */
function oneLine(s: string): string {
  return cutText(s.replace(/[\r\n\t]+/g, ' '), 150);
}

function cap(s: string): string {
  return s.length > MAX_DETAIL ? `${cutText(s, MAX_DETAIL)}\n… (truncated)` : s;
}

function indent(s: string): string {
  return s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}
