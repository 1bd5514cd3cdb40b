/** `certificates:` of an SES endpoint: PEM files read and checked at start, served instead of fetching those URLs. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pinnedFetch } from '../../adapters/webhooks/index.js';
import { webhookEntrySchema } from '../../adapters/webhooks/config.js';

const URL_A = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-a.pem';
const dir = mkdtempSync(join(tmpdir(), 'mailgate-pinned-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ses = (certificates: Record<string, string>) =>
  webhookEntrySchema.parse({
    name: 'ses-in',
    provider: 'ses',
    route: 'r',
    topic_arns: ['arn:aws:sns:eu-west-1:123456789012:t'],
    certificates,
  });

describe('pinned SNS certificates', () => {
  it('serves a pinned URL from its file and fetches any other', async () => {
    const cert = join(dir, 'a.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'a.key'), '-out', cert, '-days', '1', '-subj', '/CN=a'],
      {
        stdio: 'ignore',
      },
    );
    const fetched: string[] = [];
    const get = pinnedFetch(ses({ [URL_A]: cert }), async (url) => (fetched.push(url), Buffer.from('elsewhere')));
    expect((await get(URL_A)).equals(readFileSync(cert))).toBe(true);
    expect((await get('https://sns.eu-west-1.amazonaws.com/other.pem')).toString()).toBe('elsewhere');
    expect(fetched).toEqual(['https://sns.eu-west-1.amazonaws.com/other.pem']);
  });

  it('refuses to start with a missing or non-certificate file, naming the URL', () => {
    const junk = join(dir, 'junk.pem');
    writeFileSync(junk, 'not a certificate');
    for (const path of [join(dir, 'missing.pem'), junk]) {
      expect(() => pinnedFetch(ses({ [URL_A]: path }))).toThrow(
        expect.objectContaining({ code: 'MAILGATE_ERR_CONFIG_INVALID', message: expect.stringContaining(URL_A) }),
      );
    }
  });

  it('rejects a key that is not a URL in the configuration', () => {
    expect(() => ses({ 'not a url': '/x.pem' })).toThrow();
  });
});
