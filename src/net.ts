/**
 * Transport rules shared by every outbound connection and the listeners: which hosts count as
 * this machine (loopback), and when a URL may be plain http. A secret sent over plain http
 * to another host can be read and altered on the way, so http is for loopback only unless
 * the operator opts in by name (`allow_insecure_http: true` beside the URL).
 */
import { isIP } from 'node:net';

/** `localhost` (and `*.localhost`), 127.0.0.0/8, ::1 and ::ffff:127.x — with or without IPv6 brackets. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^(0{0,4}:){7}0{0,3}1$/.test(h) || /^::ffff:127\./.test(h);
  return false;
}

/**
 * Why `url` may not be used, or undefined when it may: https anywhere, http only for a
 * loopback host or when `allowInsecure` is set. Other schemes are refused.
 */
export function insecureUrlIssue(url: string, allowInsecure: boolean | undefined): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol === 'https:') return undefined;
  if (parsed.protocol !== 'http:') return `must be an https:// URL, got ${parsed.protocol}`;
  if (isLoopbackHost(parsed.hostname) || allowInsecure === true) return undefined;
  const optIn = 'set allow_insecure_http: true beside it to send over plain http anyway';
  return `must use https:// for the non-loopback host ${parsed.hostname} (${optIn})`;
}
