/**
 * Gmail benchmark (`npm run bench:gmail`): 10 mailboxes × 1,000 messages (30 % with a 100 KiB
 * attachment) in the Gmail stand-in, read by `mailgate serve` into the emulator. Prints:
 * - messages per second (from the moment the service listens until the emulator holds every
 *   comment) beside the ceiling Google's per-user quota allows: 250 units per second per
 *   mailbox at 5 units a read is 50 messages a second per mailbox, mailboxes in parallel;
 * - HTTP requests and quota units per message beside the minimum: list pages + batches of 50,
 *   and 5 units a read + 5 a list page;
 * - the most units any mailbox spent in one second, as the stand-in measured it (limit 250);
 * - mailgate's CPU per message beside the IMAP adapter's on the same messages (the stand-in's
 *   raw bytes of each message appended to a Dovecot mailbox per Gmail mailbox).
 *
 *   node dist/bench/gmail.js [--mailboxes 10] [--messages 1000] [--attachment-kb 100] [--runs 1] [--no-imap]
 *
 * The stand-in and the emulator run in this process; mailgate in a child (`mailgate serve`).
 */
import { buildMessage, sampleMessage, type MessageSpec } from '../adapters/gmail/stand-in/message.js';
import { startGmailStandIn } from '../adapters/gmail/stand-in/server.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ATTACHMENT, f, MAILBOXES, mailboxBench, median, MESSAGES, serveRun, TOTAL, type Run } from './support/mailbox-bench.js';

const PAGE_SIZE = 500;
const BATCH = 50;
const UNITS_PER_SECOND = 250;

const user = (m: number) => `support${m}@example.test`;
const specs = (m: number): MessageSpec[] =>
  Array.from({ length: MESSAGES }, (_, i) =>
    sampleMessage(i, { mailbox: user(m), tag: `bench-m${m}`, ...(i % 10 < 3 ? { attachmentBytes: ATTACHMENT } : {}) }),
  );

type GmailRun = Run & { http: number; units: number; maxUnitsPerSecond: number; overLimit: number };

async function gmailRun(): Promise<GmailRun> {
  const standIn = await startGmailStandIn();
  try {
    for (let m = 0; m < MAILBOXES; m++) {
      standIn.addMailbox(user(m));
      standIn.deliver(user(m), specs(m));
    }
    const mailboxes = Array.from({ length: MAILBOXES }, (_, m) => `{ user: "${user(m)}" }`).join(', ');
    const run = await serveRun('gmail', (dir) => {
      const key = join(dir, 'sa-key.json');
      writeFileSync(key, JSON.stringify(standIn.keyFile()));
      return `adapters: { gmail: [{ name: bench, route: bench, auth: { service_account: "${key}" }, api_url: "${standIn.url}", page_size: ${PAGE_SIZE}, mailboxes: [${mailboxes}] }] }`;
    });
    const stats = Array.from({ length: MAILBOXES }, (_, m) => standIn.stats(user(m)));
    return {
      ...run,
      http: standIn.http.api + standIn.http.batch,
      units: stats.reduce((a, s) => a + s.units, 0),
      maxUnitsPerSecond: Math.max(...stats.map((s) => s.maxUnitsPerSecond)),
      overLimit: stats.reduce((a, s) => a + s.overLimit, 0),
    };
  } finally {
    await standIn.close();
  }
}

/** The raw bytes of each message, for the IMAP floor. */
const raws = (m: number) => specs(m).map((spec, i) => buildMessage(spec, m * MESSAGES + i).raw);

function report(g: GmailRun, runs: GmailRun[]): void {
  const pages = Math.ceil(MESSAGES / PAGE_SIZE);
  const minHttp = MAILBOXES * (pages + Math.ceil(MESSAGES / BATCH));
  const minUnits = MAILBOXES * (5 * pages + 5 * MESSAGES);
  const ceilingPerMailbox = UNITS_PER_SECOND / 5;
  const seconds = median(runs.map((x) => x.seconds));
  console.log(
    `  messages/s            ${f(TOTAL / seconds)}   (ceiling from Google's per-user quota: ${f(ceilingPerMailbox * MAILBOXES)} = ${f(ceilingPerMailbox)} per mailbox × ${MAILBOXES})`,
  );
  console.log(
    `  HTTP requests/message ${f(g.http / TOTAL, 3)}   (minimum ${f(minHttp / TOTAL, 3)}: ${pages} list page(s) + ${Math.ceil(MESSAGES / BATCH)} batches of ${BATCH} per mailbox; plus profile, labels, the large-message search)`,
  );
  console.log(`  quota units/message   ${f(g.units / TOTAL, 3)}   (minimum ${f(minUnits / TOTAL, 3)}: 5 a read + 5 a list page)`);
  console.log(
    `  most units/s/mailbox  ${g.maxUnitsPerSecond}     (Google's limit: ${UNITS_PER_SECOND}; calls refused over a limit: ${g.overLimit})`,
  );
}

await mailboxBench('gmail', gmailRun, raws, report);
