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
