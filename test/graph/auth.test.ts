/**
 * Client-credentials tokens through @azure/msal-node against the stand-in's identity endpoints
 * over plain http on loopback: a secret, a certificate-signed assertion, a wrong secret (coded
 * error), and a fresh token after a refusal.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphTokens } from '../../adapters/graph/auth.js';
import { graphEntrySchema } from '../../adapters/graph/config.js';
import { startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/server.js';

let dir: string;
let pemFile: string;
let standIn: GraphStandIn;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-graph-auth-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=mailgate-test'],
    {
      stdio: 'ignore',
    },
  );
  pemFile = join(dir, 'key-and-cert.pem');
  writeFileSync(pemFile, readFileSync(key, 'utf8') + readFileSync(cert, 'utf8'));
  standIn = await startGraphStandIn({
    clients: [
      { clientId: 'app-secret', secret: 's3cret' },
      { clientId: 'app-cert', certificate: readFileSync(cert, 'utf8') },
    ],
  });
});
afterAll(async () => {
  await standIn?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const entry = (client_id: string, auth: unknown) =>
  graphEntrySchema.parse({
    name: 'm365',
    route: 'support',
    tenant_id: standIn.tenantId,
    client_id,
    auth,
    authority_url: standIn.url,
    graph_url: standIn.graphUrl,
    mailboxes: [{ user: 'support@contoso.test' }],
  });

describe('graph tokens through msal-node', () => {
  it('a client secret gets a token the stand-in accepts, cached until renewed', async () => {
    const tokens = graphTokens(entry('app-secret', { client_secret: 's3cret' }));
    const t = await tokens.get();
    expect(standIn.identity.check(`Bearer ${t}`)).toBeUndefined();
    expect(await tokens.get()).toBe(t);
    expect(standIn.http.token).toBeGreaterThanOrEqual(1);
  });

  it('a certificate signs the client assertion', async () => {
    const tokens = graphTokens(entry('app-cert', { certificate: pemFile }));
    const t = await tokens.get();
    expect(standIn.identity.check(`Bearer ${t}`)).toBeUndefined();
  });

  it('a refused token is replaced by a fresh one (msal asked to skip its cache)', async () => {
    const tokens = graphTokens(entry('app-secret', { client_secret: 's3cret' }));
    const first = await tokens.get();
    tokens.invalidate(first);
    const second = await tokens.get();
    expect(second).not.toBe(first);
  });

  it('a wrong secret is MAILGATE_ERR_GRAPH_TOKEN naming the identity platform error', async () => {
    const tokens = graphTokens(entry('app-secret', { client_secret: 'wrong' }));
    await expect(tokens.get()).rejects.toMatchObject({
      code: 'MAILGATE_ERR_GRAPH_TOKEN',
      message: expect.stringContaining('invalid_client'),
    });
  });

  it('http is refused for an authority that is not loopback', () => {
    const bad = { ...entry('app-secret', { client_secret: 'x' }), authority_url: 'http://login.example.com' };
    expect(graphEntrySchema.safeParse(bad).success).toBe(false);
  });
});
