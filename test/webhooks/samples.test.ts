/**
 * The sample requests under samples/webhooks/ (one per provider, built by each module's
 * simulate() from a sample email) verify and normalize back to their source email's exact bytes.
 * MAILGATE_WRITE_SAMPLES=1 rewrites them (after a change to a simulator).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { webhookEntrySchema } from '../../adapters/webhooks/config.js';
import { providerOf } from '../../adapters/webhooks/providers.js';
import type { Envelope } from '../../src/pipeline/types.js';
import { toRequest, verifyContext } from './support.js';

const root = new URL('../../', import.meta.url);
const file = (path: string) => new URL(path, root);

interface Sample {
  provider: string;
  source: string;
  envelope: Envelope;
  entry: unknown;
}
const index = JSON.parse(readFileSync(file('samples/webhooks/samples.json'), 'utf8')) as { now: number; samples: Sample[] };

describe('webhook samples', () => {
  it('has one sample per implemented provider', () => {
    expect(index.samples.map((s) => s.provider)).toEqual(['sendgrid', 'mailgun', 'postmark', 'mandrill', 'sparkpost']);
  });

  for (const s of index.samples) {
    it(`${s.provider}: the sample request verifies and normalizes to ${s.source}`, async () => {
      const entry = webhookEntrySchema.parse(s.entry);
      const module = providerOf(entry);
      const raw = readFileSync(file(s.source));
      const bodyPath = file(`samples/webhooks/${s.provider}.body`);
      const headersPath = file(`samples/webhooks/${s.provider}.headers.json`);
      if (process.env['MAILGATE_WRITE_SAMPLES'] === '1') {
        const sim = module.simulate(raw, entry, {
          url: 'url' in entry ? entry.url : `http://localhost:8080/webhooks/${entry.name}`,
          now: index.now,
          envelope: s.envelope,
        });
        writeFileSync(bodyPath, sim.body);
        writeFileSync(headersPath, JSON.stringify(sim.headers, null, 2) + '\n');
      }
      const headers = JSON.parse(readFileSync(headersPath, 'utf8')) as Record<string, string>;
      const req = toRequest({ method: 'POST', headers, body: readFileSync(bodyPath) }, `/webhooks/${entry.name}`);
      const ctx = verifyContext(index.now);
      await module.verify(req, entry, ctx);
      const [m, ...rest] = await module.normalize(req, entry, ctx);
      expect(rest).toEqual([]);
      expect(m!.raw.equals(raw)).toBe(true);
      expect(m!.envelope.to).toEqual(s.envelope.to);
    });
  }
});
