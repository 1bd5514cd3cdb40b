/**
 * The pipeline a user would build by hand, as `bench:imap`'s reference (run as its own process,
 * as `mailgate serve` is): imapflow full-source fetch of the whole INBOX → mailparser
 * `simpleParser` → a document of the raw header lines and the text → `sync-raw-emails` in
 * batches of 128. No durability, no dedupe, no preview, no checkpoint: the floor of what a
 * useful pipeline does, built from the libraries people reach for.
 *
 *   node dist/bench/support/handbuilt.js <host> <port> <user> <pass> <api-url> <token> <project/source>
 *
 * Prints "ready" once its modules are loaded (the benchmark's clock starts there, as it starts
 * at mailgate's "serving on"), then runs and exits 0.
 */
import { ImapFlow } from 'imapflow';
import { DEFAULT_TRANSFORM_TAG } from '../../src/limits.js';

const BATCH = 128;

/** The part of mailparser's answer a hand-built pipeline reads (mailparser ships no types). */
interface Parsed {
  headerLines: Array<{ key: string; line: string }>;
  text?: string;
}

const { simpleParser } = (await import('mailparser' as string)) as { simpleParser: (raw: Buffer) => Promise<Parsed> };

interface Document {
  raw_email: { headers: { raw: string }; body: { plain: string } };
}

async function post(url: string, token: string, documents: Document[]): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ documents, transform_tag: DEFAULT_TRANSFORM_TAG }),
  });
  if (!res.ok) throw new Error(`sync-raw-emails answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

async function main(): Promise<void> {
  const [host, port, user, pass, api, token, source] = process.argv.slice(2);
  if (source === undefined) throw new Error('usage: handbuilt.js host port user pass api-url token project/source');
  const [project, name] = source.split('/');
  const url = `${api}/api/v1/sources/${project}/${name}/sync-raw-emails`;
  process.stdout.write('ready\n');
  const client = new ImapFlow({ host: host!, port: Number(port), secure: false, auth: { user: user!, pass: pass! }, logger: false });
  await client.connect();
  try {
    await client.mailboxOpen('INBOX', { readOnly: true });
    let batch: Document[] = [];
    for await (const m of client.fetch('1:*', { uid: true, source: true })) {
      if (m.source === undefined) continue;
      const parsed = await simpleParser(m.source);
      const headers = parsed.headerLines.map((h) => h.line).join('\r\n');
      batch.push({ raw_email: { headers: { raw: headers }, body: { plain: parsed.text ?? '' } } });
      if (batch.length === BATCH) {
        await post(url, token!, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await post(url, token!, batch);
  } finally {
    await client.logout().catch(() => client.close());
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
