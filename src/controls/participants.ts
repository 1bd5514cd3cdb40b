/**
 * Participant rules: an address matches itself, `*@domain` every address of exactly that
 * domain, `domain` every address of it and of its subdomains. Case does not matter.
 */

export function participantMatches(rule: string, address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at < 0) return false;
  const domain = address.slice(at + 1);
  if (rule.startsWith('*@')) return domain === rule.slice(2);
  if (rule.includes('@')) return address === rule;
  return domain === rule || domain.endsWith(`.${rule}`);
}

export function anyMatches(rules: readonly string[], addresses: readonly string[]): boolean {
  return addresses.some((a) => rules.some((r) => participantMatches(r, a)));
}

/**
 * A participant rule as written in the configuration or on the command line, trimmed and
 * lowercased: an address (a@example.com), `*@domain` or `domain`; undefined when it is none of
 * them. The schema (schema.ts) and the CLI's --allow/--deny check rules with this one function.
 */
export function participantRule(written: string): string | undefined {
  const s = written.trim().toLowerCase();
  return /^(\*@)?[^\s@*]+(\.[^\s@*]+)*$/.test(s) || /^[^\s@*]+@[^\s@*]+$/.test(s) ? s : undefined;
}
