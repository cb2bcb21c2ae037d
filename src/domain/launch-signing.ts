/**
 * Which key signs a launch request and its per-run callback token
 * (docs/launchers.md). `LAUNCHER_SECRET` is the operator's: it signs only
 * launchers the operator set (the workflows file, the admin token). A
 * tenant's launcher must carry a secret of its own: signed with the
 * operator's key, its target (which the tenant runs) would hold requests
 * valid under that key and could replay them within five minutes to any
 * other target that trusts it, another tenant's included, starting that
 * tenant's jobs. Pure.
 */

export type SigningKey = { ok: true; secret: string } | { ok: false; reason: string };

export function launchSigningKey(launcher: { secret?: string; operatorSet?: boolean }, operatorSecret: string | undefined): SigningKey {
  if (launcher.secret) return { ok: true, secret: launcher.secret };
  if (!launcher.operatorSet) return { ok: false, reason: 'no signing secret of its own: a launcher set with a tenant token needs "secret" or "secretEnv" (LAUNCHER_SECRET signs only launchers the operator set)' };
  if (operatorSecret) return { ok: true, secret: operatorSecret };
  return { ok: false, reason: 'no signing secret: set LAUNCHER_SECRET or the launcher\'s "secret"' };
}
