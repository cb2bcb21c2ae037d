/**
 * Removes secret values from text before it is stored, shown or posted.
 * Pure: the caller hands in the values (the bot's tokens, tenants' tokens,
 * launcher and destination secrets) and the shapes of secrets it cannot list
 * (API tokens it generated and kept only as digests).
 */

export const REDACTED = '[redacted]';

/** Values shorter than this are not redacted: "abc" would eat ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** Tokens the API generates (`sbt_` + 32 base64url characters): only their digest is kept, so they are found by shape. */
export const GENERATED_TOKEN = /\bsbt_[A-Za-z0-9_-]{32}(?![A-Za-z0-9_-])/g;

export type Redactor = (text: string) => string;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function createRedactor(values: Iterable<string>, shapes: readonly RegExp[] = [GENERATED_TOKEN]): Redactor {
  // Longest first: a secret that contains another is removed whole.
  const usable = [...new Set([...values].filter((v) => v.length >= MIN_SECRET_LENGTH))].sort((a, b) => b.length - a.length);
  const literal = usable.length ? new RegExp(usable.map(escapeRegExp).join('|'), 'g') : undefined;
  return (text) => {
    let out = literal ? text.replace(literal, REDACTED) : text;
    for (const shape of shapes) out = out.replace(shape, REDACTED);
    return out;
  };
}

/** The password of a URL's userinfo (`https://user:pass@host/`), as written and decoded: a credential like any other. */
export function urlPasswords(url: string): string[] {
  try {
    const password = new URL(url).password;
    if (!password) return [];
    let decoded = password;
    try {
      decoded = decodeURIComponent(password);
    } catch {
      // Not percent-encoded text: the written form is the one that shows up.
    }
    return [...new Set([password, decoded])];
  } catch {
    return [];
  }
}

/** A URL fit to show: its userinfo password replaced with the marker. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    return `${u.protocol}//${u.username}:${REDACTED}@${u.host}${u.pathname}${u.search}${u.hash}`;
  } catch {
    return url;
  }
}

/**
 * Whose a launcher's secrets are (src/secrets.ts): the operator's, redacted
 * from every text, when the operator set it; else its tenant's, who chose
 * the values, redacted from that tenant's text only.
 */
export function secretScope(launcher: { operatorSet?: boolean } | null | undefined, tenantId: string): string | undefined {
  return launcher?.operatorSet ? undefined : tenantId;
}
