/**
 * Which route a recipient's messages go to: the first `recipients[]` entry whose address,
 * `*` pattern or /regex/ matches the address, or else (plus addressing) its base address
 * `local@domain` without the `+detail`. No match: the recipient is refused at RCPT time.
 */
import type { SmtpEntry } from './config.js';

export interface RecipientMatch {
  route: string;
  /** The address as the client gave it. */
  address: string;
  /** The `+detail` of a plus address that matched by its base address. */
  plus?: string;
}

function compile(match: string): (address: string) => boolean {
  if (match.startsWith('/')) {
    const re = new RegExp(`^(?:${match.slice(1, -1)})$`, 'i');
    return (a) => re.test(a);
  }
  if (match.includes('*')) {
    const re = new RegExp(
      `^${match
        .split('*')
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
      'i',
    );
    return (a) => re.test(a);
  }
  const exact = match.toLowerCase();
  return (a) => a.toLowerCase() === exact;
}

/** `support+billing@example.com` → base `support@example.com`, detail `billing`; undefined without a `+`. */
export function plusParts(address: string): { base: string; detail: string } | undefined {
  const at = address.lastIndexOf('@');
  const plus = address.indexOf('+');
  if (at < 0 || plus < 1 || plus > at) return undefined;
  return { base: address.slice(0, plus) + address.slice(at), detail: address.slice(plus + 1, at) };
}

export function recipientMatcher(
  entry: Pick<SmtpEntry, 'route' | 'recipients' | 'plus_addressing'>,
): (address: string) => RecipientMatch | undefined {
  const rules = entry.recipients.map((r) => ({ test: compile(r.match), route: r.route ?? entry.route }));
  const find = (a: string) => rules.find((r) => r.test(a));
  return (address) => {
    const direct = find(address);
    if (direct) return { route: direct.route, address };
    const parts = entry.plus_addressing ? plusParts(address) : undefined;
    const base = parts && find(parts.base);
    if (!parts || !base) return undefined;
    return { route: base.route, address, ...(parts.detail !== '' && { plus: parts.detail }) };
  };
}
