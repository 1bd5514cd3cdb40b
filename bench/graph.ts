/**
 * Graph benchmark (`npm run bench:graph`): 10 mailboxes × 1,000 messages (30 % with a 100 KiB
 * attachment) in the Graph stand-in, read by `mailgate serve` into the emulator. Prints:
 * - messages per second (from the moment the service listens until the emulator holds every
 *   comment) beside the ceiling Graph's documented limits allow: 10,000 requests per 10 minutes
 *   per mailbox is about 16.7 content reads a second per mailbox, mailboxes in parallel;
 * - requests per message beside the minimum: HTTP requests (a `$batch` is one) against delta
 *   pages + batches of 20, and requests as Graph counts them (each `$batch` member) against
 *   delta pages + one read per message;
 * - mailgate's CPU per message beside the IMAP adapter's on the same messages (the stand-in's
 *   MIME of each message appended to a Dovecot mailbox per Graph mailbox).
 *
 *   node dist/bench/graph.js [--mailboxes 10] [--messages 1000] [--attachment-kb 100] [--runs 1] [--no-imap]
 *
 * The stand-in and the emulator run in this process; mailgate in a child (`mailgate serve`).
 */
import { renderMime, sampleMessage, type MessageSpec } from '../adapters/graph/stand-in/message.js';
import { startGraphStandIn } from '../adapters/graph/stand-in/server.js';
import { ATTACHMENT, f, MAILBOXES, mailboxBench, median, MESSAGES, serveRun, TOTAL, type Run } from './support/mailbox-bench.js';

const CLIENT_ID = '3b1a5f0e-0000-4000-8000-000000000001';
const PAGE_SIZE = 100;
const BATCH = 20;
/** Graph's documented per-mailbox request budget. */
const PER_10_MIN = 10_000;

const user = (m: number) => `support${m}@contoso.test`;
const specs = (m: number): MessageSpec[] =>
  Array.from({ length: MESSAGES }, (_, i) =>
    sampleMessage(i, { mailbox: user(m), tag: `bench-m${m}`, ...(i % 10 < 3 ? { attachmentBytes: ATTACHMENT } : {}) }),
  );

type GraphRun = Run & { http: number; counted: number; maxInFlight: number };

async function graphRun(): Promise<GraphRun> {
  const standIn = await startGraphStandIn();
  try {
    for (let m = 0; m < MAILBOXES; m++) {
      standIn.addMailbox(user(m));
      standIn.deliver(user(m), 'inbox', specs(m));
    }
    const mailboxes = Array.from({ length: MAILBOXES }, (_, m) => `{ user: "${user(m)}" }`).join(', ');
    const run = await serveRun(
      'graph',
      () =>
        `adapters: { graph: [{ name: bench, route: bench, tenant_id: ${standIn.tenantId}, client_id: ${CLIENT_ID}, auth: { client_secret: stand-in-secret }, ` +
        `authority_url: "${standIn.url}", graph_url: "${standIn.graphUrl}", page_size: ${PAGE_SIZE}, mailboxes: [${mailboxes}] }] }`,
    );
    const stats = Array.from({ length: MAILBOXES }, (_, m) => standIn.stats(user(m)));
    return {
      ...run,
      http: standIn.http.graph,
      counted: stats.reduce((a, s) => a + s.requests, 0),
      maxInFlight: Math.max(...stats.map((s) => s.maxInFlight)),
    };
  } finally {
    await standIn.close();
  }
}

/** The stand-in's MIME of each message, for the IMAP floor. */
const raws = (m: number) =>
  specs(m).map((spec, i) => renderMime({ id: `AAkALgAAbench${m}x${i}AAA=`, spec, isRead: false, categories: [], changeKey: 1 }));

function report(g: GraphRun, runs: GraphRun[]): void {
  const pages = Math.ceil(MESSAGES / PAGE_SIZE);
  const minHttp = MAILBOXES * (pages + Math.ceil(MESSAGES / BATCH));
  const minCounted = MAILBOXES * (pages + MESSAGES);
  const ceilingPerMailbox = (PER_10_MIN / 600) * (MESSAGES / (MESSAGES + pages));
  const seconds = median(runs.map((x) => x.seconds));
  console.log(
    `  messages/s            ${f(TOTAL / seconds)}   (ceiling from Graph's limits: ${f(ceilingPerMailbox * MAILBOXES)} sustained = ${f(ceilingPerMailbox)} per mailbox × ${MAILBOXES};`,
  );
  console.log(
    `                               ${MESSAGES} messages fit in one 10-minute budget of ${PER_10_MIN}, so a tenant allows this burst)`,
  );
  console.log(
    `  HTTP requests/message ${f(g.http / TOTAL, 3)}   (minimum ${f(minHttp / TOTAL, 3)}: ${pages} delta pages + ${Math.ceil(MESSAGES / BATCH)} batches of ${BATCH} per mailbox; plus folder look-ups)`,
  );
  console.log(
    `  counted requests/msg  ${f(g.counted / TOTAL, 3)}   (minimum ${f(minCounted / TOTAL, 3)}: delta pages + one read per message, each $batch member counted)`,
  );
  console.log(`  most in flight/mailbox ${g.maxInFlight}     (Graph's limit: 4)`);
}

await mailboxBench('graph', graphRun, raws, report);
