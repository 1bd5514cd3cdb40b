/** A `mailgate serve` (built CLI, built-in emulator, SQLite) with webhook and upload endpoints, for the client commands' tests. */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe, type ServeProcess } from '../../service/serve-process.js';

export const ADMIN_KEY = 'admin-key-0123456789abcdef';
export const RAW_SECRET = 'raw-secret-0123456789abcdef';
export const MAILGUN_KEY = 'mailgun-signing-key-0123';
export const POSTMARK_AUTH = 'pm-user:pm-pass-0123456789';
export const UPLOAD_KEY = 'upload-key-0123456789abcdef';

export interface PushServe {
  dir: string;
  serve: ServeProcess;
  url: string;
  /** The PEM private key whose public key the SendGrid entry holds. */
  sendgridKeyFile: string;
  config: string;
  /** Messages enqueued so far on the route (`GET /api/status`). */
  enqueued(): Promise<number>;
}

export function message(i: number, body = 'Hello, the invoice is wrong.'): string {
  return (
    `From: Customer ${i} <c${i}@example.com>\r\nTo: support@acme.example\r\nSubject: Question ${i}\r\n` +
    `Message-ID: <cli-${i}-${Math.random().toString(36).slice(2)}@example.com>\r\nDate: Mon, 04 Mar 2024 09:00:00 +0000\r\n\r\n${body}\r\n`
  );
}

export async function startPushServe(): Promise<PushServe> {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-push-cli-'));
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const sendgridKeyFile = join(dir, 'sendgrid.pem');
  writeFileSync(sendgridKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const [pmUser, pmPass] = POSTMARK_AUTH.split(':');
  const config = join(dir, 'mailgate.yaml');
  writeFileSync(
    config,
    [
      `store: sqlite:${join(dir, 'mailgate.db')}`,
      `server: { listen: 127.0.0.1:0, api_keys: [${ADMIN_KEY}] }`,
      'routes: [{ name: inbound, source: acme/inbound }]',
      'adapters:',
      '  webhooks:',
      `    - { name: raw-in, provider: raw, route: inbound, hmac_secret: ${RAW_SECRET} }`,
      `    - { name: mailgun-in, provider: mailgun, route: inbound, signing_key: ${MAILGUN_KEY} }`,
      `    - { name: postmark-in, provider: postmark, route: inbound, basic_auth: { user: ${pmUser}, pass: ${pmPass} } }`,
      `    - { name: sendgrid-in, provider: sendgrid, route: inbound, public_key: "${spki}" }`,
      '  upload:',
      `    - { name: uploads, route: inbound, api_keys: [${UPLOAD_KEY}] }`,
      '',
    ].join('\n'),
  );
  const serve = spawnServe(['--config', config], { cwd: dir });
  const url = await serve.url;
  const enqueued = async (): Promise<number> => {
    const res = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const status = (await res.json()) as { routes: Array<{ route: string; enqueued: number }> };
    return status.routes.find((r) => r.route === 'inbound')?.enqueued ?? 0;
  };
  return { dir, serve, url, sendgridKeyFile, config, enqueued };
}
