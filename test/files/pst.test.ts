/**
 * Outlook PST and OST files, read with the PST and OST files shipped with the reader
 * (`pst-extractor`, MIT: an Enron mailbox from the public Enron corpus, and an Outlook.com test
 * account's OST), from node_modules: never copied into the repository.
 */
import { copyFile, mkdtemp, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFilesAdapter, readInputs, type FileItem, type ReadOptions } from '../../adapters/files/index.js';
import type { AcceptOptions, Accepted, Checkpoint, Inbound, Intake } from '../../src/pipeline/types.js';
import { previewSync } from '../../src/preview/index.js';
import { readBack } from './support/mail.js';
import { ENRON_PST, TEST_OST } from './support/pst.js';

async function collect(paths: string[], options: ReadOptions = {}): Promise<FileItem[]> {
  const out: FileItem[] = [];
  for await (const item of readInputs(paths, options)) out.push(item);
  return out;
}

const codes = (item: FileItem) => previewSync(item.raw!).warnings.map((w) => w.code);

describe('PST', () => {
  it('reads every mail item folder by folder, the folder path in the origin, Sent Items included', async () => {
    const items = await collect([ENRON_PST]);
    expect(items.filter((i) => i.error)).toEqual([]);
    expect(items).toHaveLength(71);
    const byFolder = new Map<string, number>();
    for (const i of items) byFolder.set(i.origin.details['folder']!, (byFolder.get(i.origin.details['folder']!) ?? 0) + 1);
    expect(Object.fromEntries(byFolder)).toEqual({
      'lokay-m/MLOKAY (Non-Privileged)': 1,
      'lokay-m/MLOKAY (Non-Privileged)/TW-Commercial Group': 14,
      'lokay-m/MLOKAY (Non-Privileged)/Systems': 7,
      'lokay-m/MLOKAY (Non-Privileged)/Sent Items': 2,
      'lokay-m/MLOKAY (Non-Privileged)/Personal': 47,
    });
    // Positions in the file are unique and rising: they are the checkpoint.
    const indexes = items.map((i) => i.origin.details['index']);
    expect([...indexes].sort((a, b) => a - b)).toEqual(indexes);
    expect(new Set(indexes).size).toBe(71);
    const sent = items.filter((i) => i.origin.details['folder']!.endsWith('Sent Items'));
    expect((await readBack(sent[0]!.raw!)).subject).toBe('Cirque du Soleil - Dralion');
  });

  it('keeps the transport headers Exchange kept and lists attachments as metadata without their bytes', async () => {
    const items = await collect([ENRON_PST]);
    const oba = items.find((i) => i.raw!.includes("Subject: New OBA's"))!;
    const mail = await readBack(oba.raw!);
    expect(mail.from?.address).toBe('Dennis.Lee@ENRON.com');
    expect(codes(oba)).not.toContain('MAILGATE_WARN_HEADERS_SYNTHESIZED');
    const attachments = previewSync(oba.raw!).document.raw_email.attachments ?? [];
    expect(attachments).toHaveLength(11);
    expect(attachments.every((a) => a.size > 0)).toBe(true);
    const attached = attachments.reduce((n, a) => n + a.size, 0);
    expect(oba.raw!.length).toBeLessThan(attached);
  });

  it('refuses "high" encryption with a coded error naming it, and reads "compressible" encryption', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-pst-'));
    const copy = join(dir, 'high.pst');
    await copyFile(ENRON_PST, copy);
    const fh = await open(copy, 'r+');
    // bCryptMethod of a Unicode PST (MS-PST 2.2.2.6): 1 compressible (the sample's), 2 high.
    const crypt = Buffer.alloc(1);
    await fh.read(crypt, 0, 1, 513);
    expect(crypt[0]).toBe(1);
    await fh.write(Buffer.from([2]), 0, 1, 513);
    await fh.close();
    const [item, ...rest] = await collect([copy]);
    expect(rest).toEqual([]);
    expect(item!.error?.code).toBe('MAILGATE_ERR_INPUT_PST_ENCRYPTED');
    expect(item!.error?.message).toContain('"high" encryption');
  });
});

describe('OST', () => {
  it('reads the mailbox folders, skips calendar items as not mail, and rebuilds items without transport headers with a warning', async () => {
    const skipped: string[] = [];
    const items = await collect([TEST_OST], { onSkip: (p, why) => skipped.push(why) });
    expect(items.filter((i) => i.error)).toEqual([]);
    expect(items.map((i) => i.origin.details['folder'])).toEqual([
      'Deleted Items',
      ...Array(10).fill('Inbox'),
      'Sent Items',
      'Sent Items',
      'Sync Issues',
    ]);
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped.every((why) => why === 'not mail (IPM.Appointment)')).toBe(true);
    const sent = items.filter((i) => i.origin.details['folder'] === 'Sent Items');
    const accepted = sent.find((i) => i.raw!.includes('Accepted: meeting from Ed'))!;
    expect(codes(accepted)).toContain('MAILGATE_WARN_HEADERS_SYNTHESIZED');
    const mail = await readBack(accepted.raw!);
    expect(mail.subject).toBe('Accepted: meeting from Ed');
    expect(mail.to.length).toBeGreaterThan(0);
    expect(mail.date).toBeDefined();
    expect(mail.messageId).toMatch(/^<.+>$/);
    // The synthesized marker never reaches the document.
    expect(previewSync(accepted.raw!).document.raw_email.headers).not.toHaveProperty(
      'raw',
      expect.stringContaining('X-Mailgate-Synthesized'),
    );
    expect(JSON.stringify(previewSync(accepted.raw!).document.raw_email.headers)).not.toContain('X-Mailgate-Synthesized');
  });

  it('gives a deterministic Message-ID to an item that has none', async () => {
    const a = await collect([TEST_OST]);
    const b = await collect([TEST_OST]);
    expect(a.map((i) => i.raw!.toString())).toEqual(b.map((i) => i.raw!.toString()));
  });

  it('reads a body kept only as RTF (the sync log) as text', async () => {
    const items = await collect([TEST_OST]);
    const log = items.find((i) => i.origin.details['folder'] === 'Sync Issues')!;
    const body = previewSync(log.raw!).document.raw_email.body;
    expect('plain' in body ? body.plain : '').toContain('Synchronizer Version');
  });
});

/** A sink that stores batches with their checkpoint, and goes away after `failAfter` batches (a crash). */
class CrashingSink implements Intake {
  readonly stored: Inbound[] = [];
  readonly checkpoints = new Map<string, Checkpoint['value']>();
  failAfter = Infinity;
  async accept(batch: Inbound[], { checkpoint }: AcceptOptions = {}): Promise<Accepted[]> {
    if (this.failAfter-- <= 0) throw new Error('store went away');
    this.stored.push(...batch);
    if (checkpoint) this.checkpoints.set(checkpoint.key, checkpoint.value);
    return batch.map((m) => ({ id: m.key, duplicate: false }));
  }
  async item(): Promise<undefined> {
    return undefined;
  }
  async checkpoint(key: string): Promise<Checkpoint['value'] | undefined> {
    return this.checkpoints.get(key);
  }
}

describe('PST resume', () => {
  it('continues after a crash from the position in the file: nothing lost, nothing read twice', async () => {
    const sink = new CrashingSink();
    sink.failAfter = 3;
    const adapter = () => createFilesAdapter({ paths: [ENRON_PST], route: 'r', batchSize: 10 });
    await expect(adapter().start(sink, new AbortController().signal)).rejects.toThrow('store went away');
    expect(sink.stored).toHaveLength(30);
    expect(Object.values(Object.fromEntries(sink.checkpoints))[0]).toMatchObject({
      index: (sink.stored.at(-1)!.origin.details['index'] as number) + 1,
    });
    sink.failAfter = Infinity;
    await adapter().start(sink, new AbortController().signal);
    const keys = sink.stored.map((m) => m.origin.details['index']);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(71);
    expect(sink.stored.every((m) => m.failure === undefined)).toBe(true);
  });
});
