/// <reference lib="dom" />
/** The item view's Origin panel: the adapter, its instance, what its kind shows of the origin's details, and a pushed message's envelope. */
import type { ItemDetail } from '../../console-types.js';
import { h, kv, panel } from './dom.js';

/** Where the message came from; for pushed mail the envelope as the sender gave it (SMTP: MAIL FROM, RCPT TO, HELO, TLS). */
export function originPanel(d: ItemDetail): HTMLElement {
  const o = d.origin as Record<string, unknown>;
  const env = (o['envelope'] ?? null) as Record<string, unknown> | null;
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String).join(', ') : v);
  const auth = env
    ? ['spf', 'dkim', 'dmarc']
        .filter((k) => env[k] !== undefined)
        .map((k) => `${k} ${String(env[k])}`)
        .join(' · ')
    : '';
  return panel(
    'Origin',
    kv([
      ['Adapter', o['adapter']],
      ['Instance', o['instance'] === '' ? undefined : o['instance']],
      ...d.origin_lines.map((l): [string, unknown] => [l.label, l.value]),
      ['Id', o['id']],
      ['Key', d.key],
    ]),
    env
      ? h('div', {}, [
          h('h3', { text: 'Envelope' }),
          kv([
            ['Provider', env['provider']],
            ['MAIL FROM', env['from'] === '' ? '<> (null sender)' : env['from']],
            ['RCPT TO', list(env['to'])],
            ['Client address', env['remoteAddress']],
            ['HELO', env['helo']],
            ['TLS', env['tls'] === undefined ? undefined : env['tls'] ? 'yes' : 'no'],
            ['Authentication', auth],
            ['Spam', env['spamVerdict'] ?? env['spamScore']],
            ...Object.entries((env['extra'] ?? {}) as Record<string, unknown>).map(([k, v]): [string, unknown] => [k, v]),
          ]),
        ])
      : null,
  );
}
