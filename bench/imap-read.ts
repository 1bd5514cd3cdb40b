/**
 * The IMAP read path alone (`npm run bench:imap-read`): what the event loop spends on the IMAP
 * client, without intake, store or delivery. Each build's connection (adapters/imap/connection.ts
 * `openConnection`, so its client as `mailgate serve` creates it) and fetcher (`fetchChunk`, in
 * chunks of 500 as the bench:imap mailboxes are read) read a whole Dovecot mailbox, the builds in
 * turn, and the main thread's CPU per message is printed: medians over the rounds, the first
 * round of each build left out (warm-up).
 *
 *   node --expose-gc dist/bench/imap-read.js [--vs-dist OTHER/dist] [--messages 5000] [--rounds 9]
 *     [--mailboxes mixed,text]
 *
 * `--vs-dist`: another build's dist/ (its adapters/imap/connection.js, fetcher.js, config.js and
 * src/pipeline/pacer.js), for before/after figures in one sitting.
 *
 * Then the part of it imapflow's response framing takes (its ImapStream, which cuts the socket's
 * bytes into lines and literals): the bytes one more read of this build received, chunk by chunk
 * as the socket delivered them, replayed through a fresh ImapStream whose responses are released
 * as they are pushed (as the narrow FETCH readers release theirs), median of 12 samples of five replays.
 */
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ImapFlow } from 'imapflow';
import { ImapStream } from 'imapflow/lib/handler/imap-stream.js';
import { startBenchDovecot } from './support/dovecot.js';
import { mixedMessage, textMessage } from './support/imap-messages.js';

const OWN = fileURLToPath(new URL('..', import.meta.url));

function option(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

function count(name: string, fallback: number): number {
  const v = Number(option(name) ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

/** What the bench uses of a build. */
interface Build {
  name: string;
  open: (account: unknown) => Promise<ImapFlow>;
  fetchChunk: (client: ImapFlow, folder: string, uids: number[], maxBytes: number) => AsyncGenerator<{ messages: Array<{ raw: Buffer }> }>;
}

async function load(dist: string): Promise<Build> {
  const at = (p: string) => import(resolve(dist, p)) as Promise<Record<string, unknown>>;
  const connection = await at('adapters/imap/connection.js');
  const fetcher = await at('adapters/imap/fetcher.js');
  const config = await at('adapters/imap/config.js');
  const pacer = await at('src/pipeline/pacer.js');
  const Pacer = pacer['ConnectionPacer'] as new () => unknown;
  const parse = config['parseImapAccount'] as (entry: unknown) => unknown;
  const openConnection = connection['openConnection'] as (opts: unknown) => Promise<ImapFlow>;
  return {
    name: dist === OWN ? 'this build' : dist,
    open: (account) =>
      openConnection({
        config: parse(account),
        tokens: undefined,
        signal: new AbortController().signal,
        pacer: new Pacer(),
        onSocketError: () => undefined,
      }),
    fetchChunk: fetcher['fetchChunk'] as Build['fetchChunk'],
  };
}

/** One more read of `build`, its socket's chunks recorded, replayed through imapflow's ImapStream: main-thread CPU µs per message. */
async function framingUs(build: Build, account: unknown, n: number): Promise<number> {
  const client = await build.open(account);
  const chunks: Buffer[] = [];
  try {
    const lock = await client.getMailboxLock('INBOX', { readOnly: true });
    const uids = ((await client.search({ uid: '1:*' }, { uid: true })) || []).sort((a, c) => a - c);
    const socket = (client as unknown as { socket: NodeJS.EventEmitter }).socket;
    socket.on('data', (b: Buffer) => chunks.push(Buffer.from(b)));
    for (let i = 0; i < uids.length; i += 500)
      for await (const _slice of build.fetchChunk(client, 'INBOX', uids.slice(i, i + 500), 33_554_432));
    lock.release();
  } finally {
    await client.logout().catch(() => client.close());
  }
  const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  const replays: number[] = [];
  // Five replays a sample: the kernel's CPU accounting of a thread is coarse over a few ms.
  for (let r = 0; r < 15; r++) {
    const t0 = process.threadCpuUsage();
    for (let k = 0; k < 5; k++) {
      const stream = new ImapStream({ cid: 'replay', logger: quiet });
      const push = stream.push.bind(stream);
      (stream as unknown as { push: (item: { next: () => void } | null) => boolean }).push = (item) => {
        if (item === null) return push(null);
        item.next();
        return true;
      };
      for (const chunk of chunks) await new Promise((done) => stream.write(chunk, done));
    }
    const t = process.threadCpuUsage(t0);
    if (r >= 3) replays.push((t.user + t.system) / 5 / n);
  }
  return median(replays);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const n = count('messages', 5000);
  const rounds = count('rounds', 9);
  const which = (option('mailboxes') ?? 'mixed,text').split(',');
  const vs = option('vs-dist');
  const builds = [await load(OWN), ...(vs === undefined ? [] : [await load(vs)])];
  const d = await startBenchDovecot();
  try {
    console.log(
      `IMAP read path (connection + fetcher, chunks of 500), main thread CPU µs per message, medians of ${rounds - 1} rounds; load average ${loadavg()[0]!.toFixed(2)}`,
    );
    const boxes: Record<string, (i: number) => Buffer> = { mixed: (i) => mixedMessage(i, 100), text: textMessage };
    for (const user of which) {
      const make = boxes[user];
      if (make === undefined) throw new Error(`--mailboxes: no mailbox "${user}" (mixed, text)`);
      d.addUser(user, `pw-${user}`);
      d.fill(
        user,
        (function* () {
          for (let i = 0; i < n; i++) yield make(i);
        })(),
      );
      const account = { name: 'bench', route: 'bench', host: d.host, port: d.port, secure: false, auth: { user, pass: `pw-${user}` } };
      // Dovecot reads its passwd-file again at most once a second: the new user may not log in at once.
      for (let attempt = 0; ; attempt++) {
        try {
          await (await builds[0]!.open(account)).logout();
          break;
        } catch (err) {
          if (attempt > 40) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const us = builds.map((): number[] => []);
      for (let round = 0; round < rounds; round++) {
        for (const [b, build] of builds.entries()) {
          const client = await build.open(account);
          try {
            const lock = await client.getMailboxLock('INBOX', { readOnly: true });
            const uids = ((await client.search({ uid: '1:*' }, { uid: true })) || []).sort((a, c) => a - c);
            (globalThis as { gc?: () => void }).gc?.();
            const t0 = process.threadCpuUsage();
            let read = 0;
            for (let i = 0; i < uids.length; i += 500)
              for await (const slice of build.fetchChunk(client, 'INBOX', uids.slice(i, i + 500), 33_554_432))
                read += slice.messages.length;
            const t = process.threadCpuUsage(t0);
            lock.release();
            if (read !== n) throw new Error(`${build.name} read ${read} of ${n} messages`);
            if (round > 0) us[b]!.push((t.user + t.system) / n);
          } finally {
            await client.logout().catch(() => client.close());
          }
        }
      }
      const framing = await framingUs(builds[0]!, account, n);
      const line = builds.map((b, i) => `${b.name} ${median(us[i]!).toFixed(1)} (${us[i]!.map((x) => x.toFixed(1)).join(' ')})`).join('; ');
      console.log(`${user.padEnd(6)} ${n} messages: ${line}`);
      console.log(
        `${''.padEnd(6)} of which imapflow's response framing (this build's socket bytes replayed): ${framing.toFixed(1)} µs per message`,
      );
    }
  } finally {
    await d.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
