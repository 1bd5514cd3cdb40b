/**
 * Origins stored by earlier versions: one flat object per item (`adapter`, `account`, the kind's
 * own fields beside them, `pushed`). Items, dead letters and console rows holding them, on SQLite
 * and PostgreSQL, read through the store, the console API, route properties and `mailgate dlq`
 * in today's shape (`instance`, `id`, `details`), each kind shown as it shows its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { resolveUserProperties } from '../../src/pipeline/origin.js';
import type { DeadLetterPage, ItemDetail, ItemsPage } from '../../src/server/console-types.js';
import { openStore } from '../../src/store/index.js';
import type { OutboxInput } from '../../src/store/types.js';
import { ROOT } from '../cli/support/dist.js';
import { startEmulator } from '../support/emulator.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const PROGRAM = pathToFileURL(join(ROOT, 'dist', 'src', 'cli', 'program.js')).href;
const ADMIN_KEY = 'admin-key-0123456789abcdef';
const TARGET = 'acme/old';
const dir = mkdtempSync(join(tmpdir(), 'mailgate-old-origins-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopTestServer();
});

interface Case {
  name: string;
  key: string;
  /** As an earlier version wrote it. */
  old: Record<string, unknown>;
  dead?: boolean;
  /** Read back today. */
  origin: Record<string, unknown>;
  label: string;
  lines: Array<[string, string]>;
  /** `{account}`, `{folder}`, `{labels}`, `{mailbox}`, `{path}`, `{eventId}` as the earlier version filled them. */
  props: Record<string, string>;
}

const CASES: Case[] = [
  {
    name: 'imap',
    key: 'imap:support:INBOX:7:42',
    old: { adapter: 'imap', account: 'support', folder: 'INBOX', uidValidity: 7, uid: 42 },
    origin: { adapter: 'imap', instance: 'support', id: 'imap:support:INBOX:7:42', details: { folder: 'INBOX', uidValidity: 7, uid: 42 } },
    label: 'imap support INBOX uid 42',
    lines: [
      ['Folder', 'INBOX'],
      ['UIDVALIDITY', '7'],
      ['UID', '42'],
    ],
    props: { Account: 'support', Folder: 'INBOX' },
  },
  {
    name: 'vault file',
    key: 'files:u@x.example:/v/x.mbox:2',
    old: { adapter: 'files', path: '/v/x.mbox', index: 2, folder: 'Inbox', labels: ['^INBOX', 'Billing'], account: 'u@x.example' },
    // An earlier version kept no instance apart from `account`: the export's account reads as the instance.
    origin: {
      adapter: 'files',
      instance: 'u@x.example',
      id: 'files:u@x.example:/v/x.mbox:2',
      details: { path: '/v/x.mbox', index: 2, folder: 'Inbox', labels: ['^INBOX', 'Billing'] },
    },
    label: 'files u@x.example /v/x.mbox #2',
    lines: [
      ['File', '/v/x.mbox'],
      ['Message in file', '#3'],
      ['Folder', 'Inbox'],
      ['Labels', '^INBOX, Billing'],
    ],
    props: { Account: 'u@x.example', Folder: 'Inbox', Labels: '^INBOX,Billing', Path: '/v/x.mbox' },
  },
  {
    name: 'graph',
    key: 'graph:m365:AAMk=:0',
    old: {
      adapter: 'graph',
      account: 'm365',
      mailbox: 'u@x.example',
      folder: 'inbox',
      eventId: 'AAMk=',
      internetMessageId: '<g@x.example>',
    },
    origin: {
      adapter: 'graph',
      instance: 'm365',
      id: 'AAMk=',
      details: { mailbox: 'u@x.example', folder: 'inbox', eventId: 'AAMk=', internetMessageId: '<g@x.example>' },
    },
    label: 'graph m365 inbox',
    lines: [
      ['Mailbox', 'u@x.example'],
      ['Folder', 'inbox'],
      ['Message-ID', '<g@x.example>'],
    ],
    props: { Account: 'm365', Folder: 'inbox', Mailbox: 'u@x.example', EventId: 'AAMk=' },
  },
  {
    name: 'gmail',
    key: 'gmail:ws:18c0:0',
    old: { adapter: 'gmail', account: 'ws', mailbox: 'u@x.example', labels: ['INBOX', 'Support'], eventId: '18c0', threadId: '18b0' },
    origin: {
      adapter: 'gmail',
      instance: 'ws',
      id: '18c0',
      details: { mailbox: 'u@x.example', labels: ['INBOX', 'Support'], eventId: '18c0', threadId: '18b0' },
    },
    label: 'gmail ws INBOX, Support',
    lines: [
      ['Mailbox', 'u@x.example'],
      ['Labels', 'INBOX, Support'],
      ['Thread', '18b0'],
    ],
    props: { Account: 'ws', Labels: 'INBOX,Support', Mailbox: 'u@x.example', EventId: '18c0' },
  },
  {
    name: 'webhook',
    key: `sha256:${'a'.repeat(64)}`,
    dead: true,
    old: {
      adapter: 'webhook:mailgun',
      account: 'in',
      pushed: true,
      eventId: 'ev-1',
      envelope: { provider: 'mailgun', from: 'a@x.example', to: ['b@x.example'] },
    },
    origin: {
      adapter: 'webhook:mailgun',
      instance: 'in',
      id: 'ev-1',
      envelope: { provider: 'mailgun', from: 'a@x.example', to: ['b@x.example'] },
      details: { eventId: 'ev-1' },
    },
    label: 'mailgun in event ev-1',
    lines: [['Event id', 'ev-1']],
    props: { Account: 'in', EventId: 'ev-1', From: 'a@x.example' },
  },
  {
    name: 'upload',
    key: `sha256:${'b'.repeat(64)}`,
    old: { adapter: 'upload', account: 'desk', pushed: true, path: 'batch.mbox', index: 1, envelope: { provider: 'upload' } },
    origin: {
      adapter: 'upload',
      instance: 'desk',
      id: `sha256:${'b'.repeat(64)}`,
      envelope: { provider: 'upload' },
      details: { path: 'batch.mbox', index: 1 },
    },
    label: 'upload desk batch.mbox',
    lines: [
      ['File', 'batch.mbox'],
      ['Message in file', '#2'],
    ],
    props: { Account: 'desk', Path: 'batch.mbox' },
  },
  {
    name: 'smtp',
    key: `sha256:${'c'.repeat(64)}`,
    dead: true,
    old: {
      adapter: 'smtp',
      account: 'mx',
      pushed: true,
      envelope: { provider: 'smtp', from: 'a@x.example', to: ['support@x.example'], helo: 'mx.x.example', tls: true },
    },
    origin: {
      adapter: 'smtp',
      instance: 'mx',
      id: `sha256:${'c'.repeat(64)}`,
      envelope: { provider: 'smtp', from: 'a@x.example', to: ['support@x.example'], helo: 'mx.x.example', tls: true },
      details: {},
    },
    label: 'smtp mx',
    lines: [],
    props: { Account: 'mx', From: 'a@x.example', Helo: 'mx.x.example' },
  },
];

const PROPS = {
  'string:Account': '{account}',
  'string:Folder': '{folder}',
  'string:Labels': '{labels}',
  'string:Mailbox': '{mailbox}',
  'string:Path': '{path}',
  'string:EventId': '{eventId}',
  'string:From': '{envelope.from}',
  'string:Helo': '{envelope.helo}',
};

function input(c: Case, n: number): OutboxInput {
  const commentId = `c0de${n}`;
  return {
    route: 'r',
    key: `${c.key}|${TARGET}`,
    commentId,
    document: {
      raw_email: { headers: { raw: `Subject: old ${c.name}\r\nFrom: a@x.example` }, body: { plain: `body ${n}` } },
      comment_id: commentId,
    },
    // Today's shape, so that the console row is written as an earlier version wrote it (adapter, account).
    origin: { adapter: c.old['adapter'] as string, instance: (c.old['account'] as string | undefined) ?? '', id: '', details: {} },
    raw: Buffer.from(`Subject: old ${c.name}\r\n\r\nbody ${n}\r\n`),
    ...(c.dead ? { error: { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'bad' } } : {}),
  };
}

/** Every case stored (dead ones as dead letters, the others delivered), then its origin column put back as an earlier version wrote it. */
async function seed(url: string, rewrite: (id: number, json: string) => Promise<void>): Promise<Map<string, number>> {
  const store = await openStore(url);
  const ids = new Map<string, number>();
  try {
    const res = await store.enqueue(CASES.map(input));
    CASES.forEach((c, i) => ids.set(c.name, Number(res.items[i]!.id)));
    const live = await store.claim('r', 100, 'seed', 60_000);
    await store.markDelivered(
      live.map((i) => i.id),
      { outcome: 'delivered' },
    );
  } finally {
    await store.close();
  }
  for (const c of CASES) await rewrite(ids.get(c.name)!, JSON.stringify(c.old));
  return ids;
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

async function mailgate(args: string[]): Promise<string> {
  const stdout = new Capture();
  const { runCli } = (await import(PROGRAM)) as typeof import('../../src/cli/program.js');
  expect(await runCli(['node', 'mailgate', ...args], { stdout, stderr: new Capture(), stdin: process.stdin })).toBe(0);
  return stdout.text;
}

async function readsInTodaysShape(url: string, ids: Map<string, number>): Promise<void> {
  // The store.
  const store = await openStore(url);
  try {
    for (const c of CASES) {
      const item = await store.getItem(ids.get(c.name)!);
      expect(item?.origin, c.name).toEqual(c.origin);
      const props = Object.fromEntries(Object.entries(c.props).map(([k, v]) => [`string:${k}`, v]));
      expect(resolveUserProperties(PROPS, item!.origin), c.name).toEqual(props);
    }
    const listed = await store.listItems({ limit: 50 });
    expect(Object.fromEntries(listed.map((s) => [s.id, s.origin]))).toEqual(
      Object.fromEntries(CASES.map((c) => [ids.get(c.name)!, c.origin])),
    );
    expect((await store.listItems({ limit: 50, adapter: 'imap', account: 'support' })).map((s) => s.id)).toEqual([ids.get('imap')]);
    const dead = await store.listDeadLetters({ limit: 50 });
    expect(dead.map((d) => d.origin)).toEqual(CASES.filter((c) => c.dead).map((c) => c.origin));
    expect((await store.getDeadLetter(ids.get('smtp')!))?.origin).toEqual(CASES.find((c) => c.name === 'smtp')!.origin);
  } finally {
    await store.close();
  }

  // The console API of a service on the same store.
  const emu = await startEmulator({ autoCreateSources: true });
  const { startService } = (await import(SERVICE)) as typeof import('../../src/service/index.js');
  const config = loadConfig({
    overrides: {
      store: url,
      api: { url: emu.url, token: emu.token },
      server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY] },
      delivery: { drain_ms: 0 },
      routes: [{ name: 'r', source: TARGET }],
    } as never,
  });
  const service = await startService(config, { logger: createLogger(false) });
  try {
    const json = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      expect(res.status, path).toBe(200);
      return (await res.json()) as T;
    };
    const page = await json<ItemsPage>('/api/items?limit=50');
    for (const c of CASES) {
      const row = page.items.find((i) => i.id === ids.get(c.name))!;
      expect(row.origin, c.name).toMatchObject({
        kind: c.old['adapter'],
        name: c.old['account'] ?? null,
        label: c.label,
        details: c.origin['details'],
      });
      const detail = await json<ItemDetail>(`/api/items/${ids.get(c.name)}`);
      expect(detail.origin, c.name).toEqual(c.origin);
      expect(
        detail.origin_lines.map((l) => [l.label, l.value]),
        c.name,
      ).toEqual(c.lines);
    }
    const dlq = await json<DeadLetterPage>('/api/dlq?limit=50');
    expect(dlq.items.map((d) => d.origin)).toEqual(CASES.filter((c) => c.dead).map((c) => c.origin));
  } finally {
    await service.stop();
    await emu.stop();
  }

  // `mailgate dlq` and `mailgate status`.
  const rows = (await mailgate(['dlq', 'list', '--store', url])).trim().split('\n').slice(1);
  expect(rows.map((r) => r.split('\t')[4])).toEqual(CASES.filter((c) => c.dead).map((c) => c.label));
  const listedJson = JSON.parse(await mailgate(['dlq', 'list', '--json', '--store', url])) as Array<{ origin: unknown }>;
  expect(listedJson.map((d) => d.origin)).toEqual(CASES.filter((c) => c.dead).map((c) => c.origin));
  expect(await mailgate(['dlq', 'show', String(ids.get('webhook')), '--store', url])).toContain('"instance": "in"');
  expect(await mailgate(['status', '--store', url])).toContain('dead-lettered 2');
}

describe('origins stored by earlier versions', () => {
  it('SQLite: items, dead letters and console rows read in today’s shape', async () => {
    const url = `sqlite:${join(dir, 'old.db')}`;
    const ids = await seed(url, async (id, json) => {
      const db = new Database(join(dir, 'old.db'));
      db.prepare('UPDATE outbox SET origin = ? WHERE id = ?').run(json, id);
      db.close();
    });
    await readsInTodaysShape(url, ids);
  });

  it('PostgreSQL: items, dead letters and console rows read in today’s shape', async () => {
    const url = await createTestDatabase('mailgate_old_origins');
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const ids = await seed(
        url,
        async (id, json) => void (await pool.query('UPDATE outbox SET origin = $1::json WHERE id = $2', [json, id])),
      );
      await readsInTodaysShape(url, ids);
    } finally {
      await pool.end();
    }
  });
});
