/**
 * "Messages behind" of the API mailbox kinds, against their stand-ins over HTTP: in a first full
 * round a folder (Graph: its totalItemCount) or a label (Gmail: its messagesTotal) tells how many
 * of its messages are left to read, less those read so far; in a later round (Graph delta, Gmail
 * history) the page being read tells its own; a folder up to date shows none.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { sampleMessage as gmailMessage, startGmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { createGraphAdapters } from '../../adapters/graph/index.js';
import { sampleMessage as graphMessage, startGraphStandIn } from '../../adapters/graph/stand-in/index.js';
import type { Adapter, Intake } from '../../src/pipeline/types.js';
import { entryFor as gmailEntry } from '../gmail/setup.js';
import { entryFor as graphEntry, HeldSink, quiet, until } from '../graph/setup.js';

interface Case {
  kind: string;
  folder: string;
  /** The checkpoint of a round under way (it keeps how many were read, for a resume to count from). */
  cursor: string;
  start(): Promise<{
    /** One mailbox with `n` messages; adapters reading it with pages of `pageSize`. */
    mailbox(user: string, n: number, pageSize: number): Adapter & { runner: { wake(): void } };
    deliver(user: string, from: number, n: number): void;
    close(): Promise<void>;
  }>;
}

const CASES: Case[] = [
  {
    kind: 'graph',
    folder: 'inbox',
    cursor: 'graph:m365/support@example.test:inbox',
    async start() {
      const s = await startGraphStandIn();
      const deliver = (user: string, from: number, n: number) =>
        s.deliver(
          user,
          'inbox',
          Array.from({ length: n }, (_, i) => graphMessage(from + i, { mailbox: user })),
        );
      return {
        mailbox(user, n, pageSize) {
          s.addMailbox(user);
          deliver(user, 0, n);
          return createGraphAdapters(graphEntry(s, [user], { page_size: pageSize }), { logger: quiet })[0]!;
        },
        deliver,
        close: () => s.close(),
      };
    },
  },
  {
    kind: 'gmail',
    folder: 'INBOX',
    cursor: 'gmail:workspace/support@example.test:cursor',
    async start() {
      const s = await startGmailStandIn();
      const deliver = (user: string, from: number, n: number) =>
        s.deliver(
          user,
          Array.from({ length: n }, (_, i) => gmailMessage(from + i, { mailbox: user })),
        );
      return {
        mailbox(user, n, pageSize) {
          s.addMailbox(user);
          deliver(user, 0, n);
          return createGmailAdapters(gmailEntry(s, [user], { page_size: pageSize }), { logger: quiet })[0]!;
        },
        deliver,
        close: () => s.close(),
      };
    },
  },
];

let stop: AbortController;
beforeEach(() => {
  stop = new AbortController();
});
afterEach(() => stop.abort());

const folderOf = (a: Adapter, folder: string) => a.health!()[0]!.folders!.find((f) => f.folder === folder)!;

describe.each(CASES)('messages behind: $kind', (c) => {
  it('a full round counts down from the folder’s total (the count read kept with the checkpoint); a later round tells its page; up to date tells none', async () => {
    const standIn = await c.start();
    try {
      const adapter = standIn.mailbox('support@example.test', 25, 10);
      const sink = new HeldSink();
      sink.holdAfter(10);
      const done = adapter.start(sink as Intake, stop.signal);
      // The first page (10 of 25) is durable, the second held: 15 left.
      await until(() => sink.waiting === 1 && folderOf(adapter, c.folder).behind === 15, '15 behind', 10_000);
      expect(folderOf(adapter, c.folder)).toMatchObject({ state: 'in_progress', behind: 15 });
      expect(sink.checkpoints.get(c.cursor)).toMatchObject({ read: 10 });
      sink.release();
      await until(() => sink.items.size === 25 && adapter.health!()[0]!.state === 'idle', 'the first round', 10_000);
      expect(folderOf(adapter, c.folder).state).toBe('up_to_date');
      expect(folderOf(adapter, c.folder).behind).toBeUndefined();
      // New mail: the next round's page tells how many it holds while they are written.
      standIn.deliver('support@example.test', 100, 3);
      sink.holdAfter(0);
      adapter.runner.wake();
      await until(() => sink.waiting === 1, 'the new mail held', 10_000);
      expect(folderOf(adapter, c.folder)).toMatchObject({ state: 'in_progress', behind: 3 });
      sink.release();
      await until(() => sink.items.size === 28 && adapter.health!()[0]!.state === 'idle', 'the second round', 10_000);
      expect(folderOf(adapter, c.folder).behind).toBeUndefined();
      stop.abort();
      await done;
    } finally {
      await standIn.close();
    }
  });
});
