/**
 * Every kind passes the adapter contract (adapter.case.ts): the two kinds that live only in the
 * tests (kinds/), and through the registry files, raw webhooks, uploads, SMTP, and the mailbox
 * kinds against their servers: IMAP on a real Dovecot, Graph and Gmail on their stand-ins over
 * HTTP. A kind joins with one line below.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { sampleMessage as graphMessage, startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import { sampleMessage as gmailMessage, startGmailStandIn, type GmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { createAdapter, KINDS, simulator, type AdapterEntryOf, type AdapterKind } from '../../adapters/index.js';
import type { KindDefinition } from '../../src/config/kind.js';
import { createLogger } from '../../src/logger.js';
import { processPacer } from '../../src/pipeline/pacer.js';
import { backoffDelay } from '../../src/retry.js';
import { createTokenCache } from '../../src/tokens.js';
import type { KindImplementation } from '../../src/pipeline/kind.js';
import type { Adapter, AdapterContext, PushRequest } from '../../src/pipeline/types.js';
import { RawClient } from '../smtp/client.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { adapterContract, message, ROUTE, type KindCase } from './adapter.case.js';
import * as postbox from './kinds/postbox.js';
import * as sequence from './kinds/sequence.js';

const ctx: AdapterContext = { logger: createLogger({ level: 'silent' }), maxMessageBytes: 10 * 1024 * 1024 };
const dir = mkdtempSync(join(tmpdir(), 'mailgate-contract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An adapter made through its kind's definition, as the registry makes one (with the shared services). */
async function fromDefinition(def: KindDefinition, entry: unknown): Promise<Adapter> {
  const { implementation } = (await def.load()) as { implementation: KindImplementation<unknown> };
  const services = { log: ctx.logger, pacer: processPacer(), backoff: backoffDelay, tokenCache: createTokenCache };
  const made = implementation.create((await def.schema()).parse(entry), { ...ctx, ...services });
  return Array.isArray(made) ? made[0]! : made;
}

/** An adapter made through the registry from an entry its kind's schema validated, as the runtime makes one. */
const registered =
  <K extends AdapterKind>(kind: K, entry: unknown) =>
  async () =>
    createAdapter(kind, (await KINDS[kind].schema()).parse(entry) as AdapterEntryOf<K>, ctx);

/** A POST to the adapter's first endpoint; its status. */
async function post(adapter: Adapter, body: Buffer, headers: Record<string, string>): Promise<number> {
  const endpoint = adapter.endpoints!()[0]!;
  const req: PushRequest = { method: 'POST', url: endpoint.path, headers, body, remoteAddress: '127.0.0.1' };
  return (await endpoint.handle(req, {})).status;
}

const mbox = join(dir, 'five.mbox');
writeFileSync(
  mbox,
  Buffer.concat(
    [0, 1, 2, 3, 4].map((i) =>
      Buffer.concat([Buffer.from('From a@example.com Mon Jan  1 00:00:00 2024\n'), message(i), Buffer.from('\n')]),
    ),
  ),
);
const HMAC = 'contract-secret-0123456789';
const UPLOAD_KEY = 'contract-upload-key-0123456789';

const pull = (kind: string, build: () => Promise<Adapter>, messages: number): KindCase => ({ kind, mode: 'pull', messages, build });
/** A push kind answering over HTTP: 2xx once stored, 503 to retry; `sign` makes the request its senders make. */
const http = (kind: string, build: () => Promise<Adapter>, sign: (raw: Buffer) => Promise<Signed> | Signed): KindCase => ({
  kind,
  mode: 'push',
  build,
  send: async (a, raw) => {
    const { body, headers } = await sign(raw);
    return post(a, body, headers);
  },
  success: (s) => s >= 200 && s < 300,
  retryable: [503],
});
type Signed = { body: Buffer; headers: Record<string, string> };

const asIs = (raw: Buffer): Signed => ({ body: raw, headers: { 'content-type': 'message/rfc822' } });
const withKey = (raw: Buffer): Signed => ({
  body: raw,
  headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${UPLOAD_KEY}` },
});
async function signedRaw(raw: Buffer): Promise<Signed> {
  const { simulator: sim } = await simulator();
  const entry = sim.entryFromSecrets('raw', { hmacSecret: HMAC }, 'http://127.0.0.1/webhooks/raw-in');
  const req = sim.request(entry, raw, { url: 'http://127.0.0.1/webhooks/raw-in', now: Date.now() });
  return { body: req.body, headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v])) };
}

/** SMTP as a mail server speaks it; the reply code of the final dot (250, or 451 to retry). */
async function smtp(a: Adapter, raw: Buffer): Promise<number> {
  const listener = a as Adapter & { listening(): { port: number } | undefined };
  for (let i = 0; listener.listening() === undefined && i < 200; i++) await new Promise((r) => setTimeout(r, 10));
  const { client } = await RawClient.open(listener.listening()!.port);
  try {
    for (const line of ['EHLO mail.example.org', 'MAIL FROM:<a@example.com>', 'RCPT TO:<b@example.com>', 'DATA'])
      console.error(line, await client.cmd(line));
    return (await client.data(raw)).code;
  } finally {
    await client.cmd('QUIT').catch(() => undefined);
  }
}
const smtpCase = (build: () => Promise<Adapter>): KindCase => ({
  kind: 'smtp',
  mode: 'push',
  build,
  send: smtp,
  success: (c) => c === 250,
  retryable: [451],
});

/**
 * A mailbox kind's case: its server started at first use and stopped after the suite, a new
 * mailbox of five messages before each test, one more message on demand.
 */
function mailbox<S extends { stop?(): Promise<void>; close?(): Promise<void> }>(
  kind: string,
  start: () => Promise<S>,
  make: (server: S, user: string) => Promise<void>,
  add: (server: S, user: string, i: number) => Promise<void>,
  build: (server: S, user: string) => Promise<Adapter>,
): KindCase {
  let server: Promise<S> | undefined;
  let user = '';
  let seq = 0;
  const up = () => (server ??= start());
  afterAll(async () => {
    const s = await server;
    await (s?.stop ?? s?.close)?.call(s);
  });
  return {
    kind,
    mode: 'pull',
    messages: 5,
    reset: async () => {
      user = `contract${seq++}`;
      const s = await up();
      await make(s, user);
      for (let i = 0; i < 5; i++) await add(s, user, i);
    },
    more: async () => add(await up(), user, 5),
    build: async () => build(await up(), user),
  };
}

const imapCase = mailbox<DovecotServer>(
  'imap',
  () => startDovecot(),
  (s, user) => s.addUser(user, `pw-${user}`),
  async (s, user, i) => void (await s.append(user, 'INBOX', [message(i)])),
  (s, user) =>
    registered('imap', {
      name: user,
      route: ROUTE,
      host: s.host,
      port: s.port,
      secure: false,
      auth: { user, pass: `pw-${user}` },
      folders: ['INBOX'],
    })(),
);

const GRAPH_CLIENT = '3b1a5f0e-0000-4000-8000-0000000000c1';
const GRAPH_SECRET = 'contract-graph-secret';
const graphCase = mailbox<GraphStandIn>(
  'graph',
  () => startGraphStandIn({ clients: [{ clientId: GRAPH_CLIENT, secret: GRAPH_SECRET }] }),
  async (s, user) => void s.addMailbox(`${user}@contoso.test`),
  async (s, user, i) => void s.deliver(`${user}@contoso.test`, 'inbox', [graphMessage(i, { mailbox: `${user}@contoso.test` })]),
  (s, user) =>
    registered('graph', {
      name: 'm365',
      route: ROUTE,
      tenant_id: s.tenantId,
      client_id: GRAPH_CLIENT,
      auth: { client_secret: GRAPH_SECRET },
      authority_url: s.url,
      graph_url: s.graphUrl,
      mailboxes: [{ user: `${user}@contoso.test` }],
    })(),
);

const gmailCase = mailbox<GmailStandIn>(
  'gmail',
  () => startGmailStandIn(),
  async (s, user) => void s.addMailbox(`${user}@example.com`),
  async (s, user, i) => void s.deliver(`${user}@example.com`, [gmailMessage(i, { mailbox: `${user}@example.com` })]),
  (s, user) => {
    const keyFile = join(dir, `gmail-key-${user}.json`);
    writeFileSync(keyFile, JSON.stringify(s.keyFile()));
    return registered('gmail', {
      name: 'workspace',
      route: ROUTE,
      auth: { service_account: keyFile },
      api_url: s.url,
      mailboxes: [{ user: `${user}@example.com` }],
    })();
  },
);

/** One line a kind. */
const CASES: KindCase[] = [
  pull('sequence', () => fromDefinition(sequence.kind, { name: 's', route: ROUTE, messages: 5 }), 5),
  http('postbox', () => fromDefinition(postbox.kind, { name: 'p', route: ROUTE }), asIs),
  pull('files', registered('files', { name: 'drop', route: ROUTE, paths: [mbox] }), 5),
  http('webhooks', registered('webhooks', { name: 'raw-in', provider: 'raw', route: ROUTE, hmac_secret: HMAC }), signedRaw),
  http('upload', registered('upload', { name: 'uploads', route: ROUTE, api_keys: [UPLOAD_KEY] }), withKey),
  smtpCase(registered('smtp', { name: 'mx', route: ROUTE, listen: '127.0.0.1:0', recipients: [{ match: '*' }] })),
  imapCase,
  graphCase,
  gmailCase,
];

for (const c of CASES) adapterContract(c);
