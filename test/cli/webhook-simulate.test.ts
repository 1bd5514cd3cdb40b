/**
 * `mailgate webhook simulate` against a running `mailgate serve`: each provider's request, signed
 * with the secrets of the configuration entry or of flags, is answered 2xx and stored; a wrong
 * secret gets the provider's refusal, its coded error and a non-zero exit; `--print` sends nothing.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killLeftovers } from '../service/serve-process.js';
import { runMailgate } from './support/dist.js';
import { MAILGUN_KEY, message, POSTMARK_AUTH, RAW_SECRET, startPushServe, type PushServe } from './support/push-serve.js';

let s: PushServe;
let seq = 0;

beforeAll(async () => {
  s = await startPushServe();
}, 120_000);

afterAll(async () => {
  s.serve.child.kill('SIGTERM');
  await s.serve.exit;
  killLeftovers();
  rmSync(s.dir, { recursive: true, force: true });
});

function eml(): string {
  const path = join(s.dir, `m${seq++}.eml`);
  writeFileSync(path, message(seq));
  return path;
}

const simulate = (provider: string, endpoint: string, ...args: string[]) =>
  runMailgate(['webhook', 'simulate', provider, eml(), '--url', `${s.url}/webhooks/${endpoint}`, ...args]);

describe('mailgate webhook simulate', () => {
  it.each([
    ['raw', 'raw-in', false],
    ['mailgun', 'mailgun-in', false],
    ['postmark', 'postmark-in', false],
    // The entry holds the public key of SendGrid's signed-webhook policy: the private key signs.
    ['sendgrid', 'sendgrid-in', true],
  ])('%s with the secrets of the configuration entry: 2xx and the message stored', async (provider, endpoint, privateKey) => {
    const before = await s.enqueued();
    const key = privateKey ? ['--private-key', s.sendgridKeyFile] : [];
    const run = await simulate(provider, endpoint, '--config', s.config, '--name', endpoint, ...key);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^HTTP 2\d\d\n/);
    expect(await s.enqueued()).toBe(before + 1);
  });

  it('takes the secrets from flags, and the envelope from --from and --to', async () => {
    const before = await s.enqueued();
    expect(
      (await simulate('raw', 'raw-in', '--hmac-secret', RAW_SECRET, '--from', 'a@example.com', '--to', 'x@acme.example,y@acme.example'))
        .code,
    ).toBe(0);
    expect((await simulate('mailgun', 'mailgun-in', '--signing-key', MAILGUN_KEY)).code).toBe(0);
    expect((await simulate('postmark', 'postmark-in', '--basic-auth', POSTMARK_AUTH)).code).toBe(0);
    const sendgrid = await simulate('sendgrid', 'sendgrid-in', '--private-key', s.sendgridKeyFile);
    expect(sendgrid.code).toBe(0);
    expect(await s.enqueued()).toBe(before + 4);
  });

  it.each([
    ['raw', 'raw-in', ['--hmac-secret', 'not-the-secret-0123456789'], 403, 'MAILGATE_ERR_WEBHOOK_FORGED'],
    ['mailgun', 'mailgun-in', ['--signing-key', 'not-the-signing-key'], 406, 'MAILGATE_ERR_WEBHOOK_FORGED'],
    ['postmark', 'postmark-in', ['--basic-auth', 'pm-user:wrong-password'], 403, 'MAILGATE_ERR_WEBHOOK_FORGED'],
  ] as const)(
    "%s with a wrong secret: the provider's refusal, its code and exit 1, nothing stored",
    async (provider, endpoint, flags, status, code) => {
      const before = await s.enqueued();
      const run = await simulate(provider, endpoint, ...flags);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`^HTTP ${status}\\n`));
      expect(run.stderr).toContain(`request refused with HTTP ${status}: ${code}: `);
      expect(await s.enqueued()).toBe(before);
    },
  );

  it("sendgrid signed by a key other than the policy's: 403 forged", async () => {
    const other = join(s.dir, 'other.pem');
    writeFileSync(other, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const run = await simulate('sendgrid', 'sendgrid-in', '--config', s.config, '--name', 'sendgrid-in', '--private-key', other);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('request refused with HTTP 403: MAILGATE_ERR_WEBHOOK_FORGED: ');
  });

  it('--print writes a curl command and the body file, and sends nothing', async () => {
    const before = await s.enqueued();
    const bodyFile = join(s.dir, 'print-body');
    const run = await simulate('mailgun', 'mailgun-in', '--signing-key', MAILGUN_KEY, '--print', '--body-file', bodyFile);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("-H 'Content-Type: application/x-www-form-urlencoded'");
    expect(run.stdout).toContain(`--data-binary @'${bodyFile}'`);
    expect(readFileSync(bodyFile, 'utf8')).toMatch(/(^|&)signature=[0-9a-f]{64}(&|$)/);
    expect(await s.enqueued()).toBe(before);
  });

  it('names the missing flag, an unknown provider and an unknown entry with coded errors', async () => {
    const missing = await simulate('mailgun', 'mailgun-in');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('MAILGATE_ERR_CONFIG_INVALID: simulating mailgun needs --signing-key');
    const unknown = await simulate('mailchimp', 'mailgun-in');
    expect(unknown.stderr).toContain(
      'unknown provider "mailchimp"; the providers are mailgun, mandrill, postmark, raw, sendgrid, ses, sparkpost',
    );
    const entry = await simulate('raw', 'raw-in', '--config', s.config, '--name', 'nope');
    expect(entry.stderr).toContain('has no adapters.webhooks entry "nope"; the entries are raw-in, mailgun-in, postmark-in, sendgrid-in');
  });

  it('an unreachable URL is MAILGATE_ERR_CLI_UNREACHABLE', async () => {
    const run = await runMailgate([
      'webhook',
      'simulate',
      'raw',
      eml(),
      '--url',
      'http://127.0.0.1:1/webhooks/raw-in',
      '--hmac-secret',
      RAW_SECRET,
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('MAILGATE_ERR_CLI_UNREACHABLE');
  });
});
