import { z } from 'zod';

/** The platform's on-call: at most one user group and any users, as `onCallReach` reads a tenant's `oncall`. */
export interface PlatformOnCall {
  group?: string;
  users: string[];
}

/**
 * `PLATFORM_ONCALL`: comma-separated Slack ids of the operator's people a page
 * falls to when a tenant's on-call reaches nobody (docs/alerts.md, "A page
 * that reaches nobody"): one user group `S…` and/or users `U…`/`W…`. Empty:
 * none (such a page goes to the platform channel naming nobody).
 */
export const platformOnCall = z
  .string()
  .default('')
  .transform((text, ctx): PlatformOnCall | undefined => {
    const ids = text.split(',').map((s) => s.trim()).filter(Boolean);
    if (ids.length === 0) return undefined;
    const groups = ids.filter((id) => /^S[A-Z0-9]+$/.test(id));
    const users = ids.filter((id) => /^[UW][A-Z0-9]+$/.test(id));
    for (const id of ids.filter((i) => !groups.includes(i) && !users.includes(i))) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(id)} is neither a user group id (S0123ABCD) nor a user id (U0123ABCD or W0123ABCD)` });
    }
    if (groups.length > 1) ctx.addIssue({ code: 'custom', message: `names ${groups.length} user groups (${groups.join(', ')}); name one group and any users` });
    if (ids.length !== groups.length + users.length || groups.length > 1) return z.NEVER;
    return { ...(groups[0] ? { group: groups[0] } : {}), users: [...new Set(users)] };
  });
