/**
 * `mailgate serve` syncs SQLite commits off its event loop when its configuration reads
 * mailboxes (docs/store.md): an entry of any pulling kind counts, a configuration of pushing
 * kinds alone does not (each sender waits for its own answer, so its commits sync in place).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { readsMailboxes } from '../../src/runtime/index.js';

const base = {
  store: 'sqlite:/nonexistent/mg.db',
  api: { url: 'http://127.0.0.1:9', token: 'unused' },
  routes: [{ name: 'support', source: 'acme/support' }],
};
const imap = { name: 'box', route: 'support', host: '127.0.0.1', port: 143, auth: { user: 'u', pass: 'p' } };
const smtp = { name: 'mx', route: 'support', listen: '127.0.0.1:0', recipients: [{ match: '*' }] };
const config = (adapters: Record<string, unknown[]>) => loadConfig({ overrides: { ...base, adapters } as never });

describe('readsMailboxes', () => {
  it('is true with an IMAP account, beside pushing kinds or alone', () => {
    expect(readsMailboxes(config({ imap: [imap] }))).toBe(true);
    expect(readsMailboxes(config({ imap: [imap], smtp: [smtp] }))).toBe(true);
  });

  it('is false with pushing kinds only, or no adapter at all', () => {
    expect(readsMailboxes(config({ smtp: [smtp] }))).toBe(false);
    expect(readsMailboxes(config({}))).toBe(false);
  });
});
