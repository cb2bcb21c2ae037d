import { z } from 'zod';
import type { RecurringMaintenance } from '../db/schema.js';
import { parseDuration } from '../domain/durations.js';
import { checkCron, normalizeCron } from '../domain/schedule.js';
import { canonicalTimeZone, timeZoneProblem } from '../domain/time-zone.js';
import { alsoBesideShapeProblems } from './issue-lines.js';
import { exactlyOne } from './secret-refs.js';
import { MAINTENANCE_MAX_MS } from '../domain/maintenance.js';

/** The schedule fields of the workflows file: cron, time zone, recurring maintenance windows. */

/** A cron expression as crontab(5) reads it (src/domain/cron.ts); what is stored is its normal spelling: trimmed, a macro in lower case. */
export const cronSchema = z
  .string()
  .superRefine((cron, ctx) => {
    const check = checkCron(cron);
    if (!check.ok) ctx.addIssue({ code: 'custom', message: `invalid cron: ${check.reason}` });
  })
  .overwrite(normalizeCron);

/** An IANA zone in any case, or an alias; what is stored is its canonical name (src/domain/time-zone.ts): `europe/berlin` is `Europe/Berlin`. */
export const timeZoneSchema = z
  .string()
  .superRefine((tz, ctx) => {
    const problem = timeZoneProblem(tz);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .overwrite((tz) => canonicalTimeZone(tz) ?? tz);

/**
 * A recurring maintenance window: opens at each fire time of `cron` in
 * `timezone` (the workflow's own zone when left out; UTC for a tenant) and
 * lasts `durationMinutes` or `duration` ("90m", "2h", "1h30m"): exactly one.
 */
export const maintenanceSchema = z
  .object({
    cron: cronSchema,
    durationMinutes: z.number().int().min(1).max(MAINTENANCE_MAX_MS / 60_000).optional(),
    duration: z
      .string()
      .refine((d) => parseDuration(d) !== undefined, 'not a duration; use something like "90m", "2h" or "1h30m"')
      .refine((d) => (parseDuration(d) ?? 0) <= MAINTENANCE_MAX_MS, 'at most 7d')
      .optional(),
    timezone: timeZoneSchema.optional(),
    reason: z.string().min(1).max(500).optional(),
  })
  .strict()
  .superRefine(exactlyOne('durationMinutes', 'duration', 'how long the window lasts: give "durationMinutes" (a number) or "duration" (such as "90m" or "2h")'), alsoBesideShapeProblems);

export type MaintenanceSpec = z.infer<typeof maintenanceSchema>;

/** The file's recurring windows as stored (workflows.maintenance, tenants.maintenance). */
export function recurringMaintenanceOf(specs: readonly MaintenanceSpec[] | undefined, defaultTimezone: string): RecurringMaintenance[] {
  return (specs ?? []).map((m) => ({
    cron: m.cron.trim(),
    timezone: m.timezone ?? defaultTimezone,
    durationMs: m.durationMinutes !== undefined ? m.durationMinutes * 60_000 : parseDuration(m.duration!)!,
    ...(m.reason ? { reason: m.reason } : {}),
  }));
}
