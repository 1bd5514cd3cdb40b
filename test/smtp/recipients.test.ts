/** Recipient routing, plus addressing, the client allow-list and the listener's schema. */
import { describe, expect, it } from 'vitest';
import { smtpEntrySchema } from '../../adapters/smtp/config.js';
import { allowList, isLoopback, plusParts, recipientMatcher } from '../../adapters/smtp/index.js';
import { receivedHeader } from '../../adapters/smtp/message.js';
import { resolveUserProperties } from '../../src/pipeline/origin.js';

const entry = (recipients: Array<{ match: string; route?: string }>, plus = true) =>
  smtpEntrySchema.parse({ name: 'mx', route: 'support', recipients, plus_addressing: plus });

describe('recipient matching', () => {
  const match = recipientMatcher(
    entry([
      { match: 'Support@Example.com' },
      { match: '*@billing.example.com', route: 'billing' },
      { match: '/^team-[a-z]+@example\\.org$/', route: 'teams' },
    ]),
  );

  it('matches addresses case-insensitively, * patterns and whole-address regexes, first match first', () => {
    expect(match('support@EXAMPLE.com')).toEqual({ route: 'support', address: 'support@EXAMPLE.com' });
    expect(match('ap@billing.example.com')?.route).toBe('billing');
    expect(match('team-ops@example.org')?.route).toBe('teams');
    expect(match('xteam-ops@example.org.evil')).toBeUndefined();
    expect(match('ap@billing.example.com.evil')).toBeUndefined();
    expect(match('other@example.com')).toBeUndefined();
  });

  it('matches a plus address by its base address and keeps the detail', () => {
    expect(match('support+vip@example.com')).toEqual({ route: 'support', address: 'support+vip@example.com', plus: 'vip' });
    expect(plusParts('a+b+c@x.org')).toEqual({ base: 'a@x.org', detail: 'b+c' });
    expect(plusParts('+a@x.org')).toBeUndefined();
    expect(recipientMatcher(entry([{ match: 'support@example.com' }], false))('support+vip@example.com')).toBeUndefined();
  });

  it('puts the detail into route properties with {envelope.extra.plus}; an absent one is left out', () => {
    const props = { 'string:Plus': '{envelope.extra.plus}', 'string:Helo': '{envelope.helo}', 'string:TLS': '{envelope.tls}' };
    const origin = {
      adapter: 'smtp',
      instance: 'mx',
      id: 'm1',
      details: {},
      envelope: { helo: 'mx.example.org', tls: true, extra: { plus: 'vip' } },
    };
    expect(resolveUserProperties(props, origin)).toEqual({ 'string:Plus': 'vip', 'string:Helo': 'mx.example.org', 'string:TLS': 'true' });
    expect(resolveUserProperties(props, { adapter: 'smtp', instance: 'mx', id: 'm1', details: {}, envelope: {} })).toEqual({});
  });
});

describe('client allow-list', () => {
  const allowed = allowList(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32']);

  it('checks IPv4 (also as IPv4-mapped IPv6) and IPv6 ranges', () => {
    expect(allowed('10.1.2.3')).toBe(true);
    expect(allowed('::ffff:10.1.2.3')).toBe(true);
    expect(allowed('192.0.2.7')).toBe(true);
    expect(allowed('192.0.2.8')).toBe(false);
    expect(allowed('2001:db8:1::5')).toBe(true);
    expect(allowed('2001:db9::5')).toBe(false);
    expect(allowed('127.0.0.1')).toBe(false);
  });

  it('tells loopback clients', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].map(isLoopback)).toEqual([true, true, true]);
    expect(['10.0.0.1', '::2'].map(isLoopback)).toEqual([false, false]);
  });
});

describe('listener schema', () => {
  it('fills the defaults and refuses what cannot work', () => {
    const e = entry([{ match: '*' }]);
    expect(e).toMatchObject({ listen: '127.0.0.1:2525', lmtp: false, max_message_bytes: 25 * 1024 * 1024, add_received: false });
    const bad = (over: Record<string, unknown>) =>
      smtpEntrySchema.safeParse({ name: 'mx', route: 'r', recipients: [{ match: '*' }], ...over }).success;
    expect(bad({ recipients: [] })).toBe(false);
    expect(bad({ recipients: [{ match: 'not-an-address' }] })).toBe(false);
    expect(bad({ recipients: [{ match: '/(unclosed/' }] })).toBe(false);
    expect(bad({ listen: '127.0.0.1:70000' })).toBe(false);
    expect(bad({ allow_from: ['10.0.0.0/8', 'not a range'] })).toBe(false);
    expect(bad({ auth: { users: [] } })).toBe(false);
    expect(bad({ extra: 1 })).toBe(false);
    expect(bad({ listen: '[::1]:0', allow_from: ['::1'] })).toBe(true);
  });
});

describe('adapters.smtp in the configuration', () => {
  it('checks that every route a recipient names exists', async () => {
    const { loadConfig } = await import('../../src/config/load.js');
    const load = (route: string) => () =>
      loadConfig({
        overrides: {
          routes: [{ name: 'support', source: 'acme/support' }],
          adapters: { smtp: [{ name: 'mx', route: 'support', recipients: [{ match: '*@x.org', route }] }] },
        } as never,
      });
    expect(load('support')).not.toThrow();
    expect(load('billing')).toThrow(/adapters\.smtp\[0\]\.recipients\[0\]\.route/);
  });
});

describe('add_received', () => {
  it('writes a Received: trace header naming the client, the server and the time', () => {
    const session = { id: 'ABC123', hostNameAppearsAs: 'mx.example.org', remoteAddress: '::ffff:192.0.2.5', transmissionType: 'ESMTPS' };
    const header = receivedHeader(session as never, 'gate.example.com', new Date(Date.UTC(2026, 10, 24, 12, 0, 0))).toString();
    expect(header).toBe(
      'Received: from mx.example.org ([192.0.2.5])\r\n\tby gate.example.com with ESMTPS id ABC123;\r\n\tTue, 24 Nov 2026 12:00:00 +0000\r\n',
    );
  });
});
