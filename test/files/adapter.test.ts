import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adapterDefinition, createAdapter, isAdapterKind } from '../../adapters/index.js';
import { checkpointKey, createFilesAdapter } from '../../adapters/files/index.js';
import { FIRST_BATCH_MESSAGES } from '../../adapters/files/adapter.js';
import type { FileFailure } from '../../adapters/files/index.js';
import { createLogger } from '../../src/logger.js';
import type { AcceptOptions, Accepted, Checkpoint, Inbound, Intake } from '../../src/pipeline/types.js';
import { SAMPLES } from './support/paths.js';

/**
 * An in-memory sink honouring the contract: a batch and its checkpoint land together, or not
 * at all, and a message read again (same origin) is stored once, as intake does by its key.
 */
const id = (m: Inbound) => `${m.origin.details['path']}#${m.origin.details['index']}`;

class MemorySink implements Intake {
  readonly stored: Inbound[] = [];
  readonly checkpoints = new Map<string, Checkpoint['value']>();
  accepts = 0;
  constructor(private readonly failAfter = Infinity) {}

  async accept(batch: Inbound[], { checkpoint }: AcceptOptions = {}): Promise<Accepted[]> {
    if (this.accepts >= this.failAfter) throw new Error('store went away');
    this.accepts++;
    const known = new Set(this.stored.map((m) => m.key));
    this.stored.push(...batch.filter((m) => !known.has(m.key)));
    if (checkpoint) this.checkpoints.set(checkpoint.key, checkpoint.value);
    return batch.map((m) => ({ id: m.key, duplicate: known.has(m.key) }));
  }

  async item(): Promise<undefined> {
    return undefined;
  }

  async checkpoint(key: string): Promise<Checkpoint['value'] | undefined> {
    return this.checkpoints.get(key);
  }
}

async function copySamples(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mailgate-adapter-'));
  await cp(SAMPLES, dir, { recursive: true });
  return dir;
}

describe('files adapter', () => {
  it('is registered under its kind', async () => {
    expect(isAdapterKind('files')).toBe(true);
    expect(isAdapterKind('nope')).toBe(false);
    const files = await adapterDefinition('files');
    expect(files.kind).toBe('files');
    expect(files.mode).toBe('pull');
    expect(files.schema.safeParse({ name: 'in', route: 'r', paths: ['/x'] }).success).toBe(true);
    expect(files.schema.safeParse({ name: 'in', route: 'r', paths: [] }).success).toBe(false);
    const adapter = await createAdapter(
      'files',
      { name: 'in', paths: ['/x'], route: 'r' },
      { logger: createLogger(false), maxMessageBytes: 1024 },
    );
    expect([adapter.kind, adapter.name, adapter.mode]).toEqual(['files', 'in', 'pull']);
  });

  it('starts each input with a small batch that grows to batchSize: storing and delivery start before a whole batch is parsed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-adapter-'));
    const mbox = (n: number) =>
      Array.from({ length: n }, (_, i) => `From a@x Mon Jan  1 00:00:00 2024\nMessage-ID: <m${i}@x>\nSubject: s${i}\n\nbody ${i}\n`).join(
        '\n',
      );
    await writeFile(join(dir, 'a.mbox'), mbox(1_300));
    await writeFile(join(dir, 'b.mbox'), mbox(70));
    const sizes: number[] = [];
    const sink = new (class extends MemorySink {
      override accept(batch: Inbound[], options?: AcceptOptions): Promise<Accepted[]> {
        sizes.push(batch.length);
        return super.accept(batch, options);
      }
    })();
    await createFilesAdapter({ paths: [join(dir, 'a.mbox'), join(dir, 'b.mbox')], route: 'r', batchSize: 500 }).start(
      sink,
      new AbortController().signal,
    );
    expect(FIRST_BATCH_MESSAGES).toBe(50);
    expect(sizes).toEqual([50, 200, 500, 500, 50, 50, 20]);
    expect(sink.stored).toHaveLength(1_370);
  });

  it('pushes batches with the route, absolute origins and a checkpoint per input', async () => {
    const dir = await copySamples();
    const errors: FileFailure[] = [];
    const sink = new MemorySink();
    const adapter = createFilesAdapter({
      paths: [join(dir, 'mbox'), join(dir, 'bad')],
      route: 'support',
      batchSize: 2,
      onError: (e) => errors.push(e),
    });
    await adapter.start(sink, new AbortController().signal);
    // Nine messages, and the two corrupt Outlook files as failures (intake dead-letters them).
    expect(sink.stored).toHaveLength(11);
    expect(
      sink.stored.every((m) => m.route === 'support' && m.origin.adapter === 'files' && String(m.origin.details['path']).startsWith(dir)),
    ).toBe(true);
    expect(sink.stored.filter((m) => m.failure !== undefined).map((m) => m.failure!.code)).toEqual([
      'MAILGATE_ERR_INPUT_MSG_INVALID',
      'MAILGATE_ERR_INPUT_MSG_INVALID',
    ]);
    expect(errors.map((e) => e.error.code)).toEqual(['MAILGATE_ERR_INPUT_MSG_INVALID', 'MAILGATE_ERR_INPUT_MSG_INVALID']);
    const cp = sink.checkpoints.get(checkpointKey('support', join(dir, 'mbox')));
    expect(cp).toMatchObject({ path: join(dir, 'mbox', 'mboxrd.mbox'), index: 3 });
    expect(sink.checkpoints.has(checkpointKey('support', join(dir, 'bad')))).toBe(true);
  });

  it('hands over a batch once it holds batchBytes, and keeps at most three batches not yet durable', async () => {
    const dir = await copySamples();
    const batches: number[] = [];
    let pending = 0;
    let maxPending = 0;
    const releases: Array<() => void> = [];
    const sink: Intake = {
      async accept(batch) {
        batches.push(batch.reduce((n, m) => n + m.raw.length, 0));
        pending++;
        maxPending = Math.max(maxPending, pending);
        await new Promise<void>((r) => releases.push(r));
        pending--;
        return [];
      },
      item: async () => undefined,
      async checkpoint() {
        return undefined;
      },
    };
    const adapter = createFilesAdapter({ paths: [join(dir, 'mbox')], route: 'r', batchSize: 1000, batchBytes: 1 });
    const done = adapter.start(sink, new AbortController().signal);
    // Storing is held back: the adapter must stop reading after three batches in flight.
    while (batches.length < 3) await new Promise((r) => setTimeout(r, 5));
    // A fixed wait on purpose: a fourth batch would follow file reads, and the adapter tells
    // nobody it is waiting for a slot; maxPending below checks the bound over the whole run.
    await new Promise((r) => setTimeout(r, 50));
    expect(batches).toHaveLength(3);
    let finished = false;
    const settled = done.finally(() => void (finished = true));
    // Release stored batches until the adapter is done (it may be between two batches at any look).
    while (!finished) {
      releases.shift()?.();
      await new Promise((r) => setTimeout(r, 5));
    }
    await settled;
    // One message per batch: each one alone reaches the 1-byte bound.
    expect(batches.length).toBeGreaterThan(3);
    expect(batches.every((b) => b > 0)).toBe(true);
    expect(maxPending).toBe(3);
  });

  it('resumes after an interruption: every message exactly once overall', async () => {
    const dir = await copySamples();
    const inputs = [join(dir, 'eml'), join(dir, 'mbox'), join(dir, 'maildir')];
    const reference = new MemorySink();
    await createFilesAdapter({ paths: inputs, route: 'r', batchSize: 2 }).start(reference, new AbortController().signal);

    for (const failAfter of [1, 2, 4, 5]) {
      const sink = new MemorySink(failAfter);
      const adapter = createFilesAdapter({ paths: inputs, route: 'r', batchSize: 2 });
      await expect(adapter.start(sink, new AbortController().signal)).rejects.toThrow('store went away');
      const restarted = Object.assign(new MemorySink(), { stored: [...sink.stored], checkpoints: new Map(sink.checkpoints) });
      await createFilesAdapter({ paths: inputs, route: 'r', batchSize: 2 }).start(restarted, new AbortController().signal);
      expect(restarted.stored.map(id)).toEqual(reference.stored.map(id));
    }
  });

  it('reads a file added to a directory already imported, even when it sorts before the last one read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-adapter-'));
    const mail = (n: string) => `From: a@example.com\r\nSubject: ${n}\r\nMessage-ID: <${n}@example.com>\r\n\r\n${n}\r\n`;
    await writeFile(join(dir, 'b.eml'), mail('b'));
    const sink = new MemorySink();
    await createFilesAdapter({ paths: [dir], route: 'r' }).start(sink, new AbortController().signal);
    await writeFile(join(dir, 'a.eml'), mail('a'));
    await writeFile(join(dir, 'c.eml'), mail('c'));
    await createFilesAdapter({ paths: [dir], route: 'r' }).start(sink, new AbortController().signal);
    expect(sink.stored.map((m) => basename(String(m.origin.details['path']))).sort()).toEqual(['a.eml', 'b.eml', 'c.eml']);
  });

  it('scopes checkpoints: the same input read for another destination is read whole again', async () => {
    const dir = await copySamples();
    const sink = new MemorySink();
    await createFilesAdapter({ paths: [join(dir, 'mbox')], route: 'r', scope: 'r@acme/one' }).start(sink, new AbortController().signal);
    const second: Inbound[] = [];
    const other = Object.assign(new MemorySink(), { checkpoints: sink.checkpoints });
    other.accept = async (batch, { checkpoint } = {}) => {
      second.push(...batch);
      if (checkpoint) other.checkpoints.set(checkpoint.key, checkpoint.value);
      return [];
    };
    await createFilesAdapter({ paths: [join(dir, 'mbox')], route: 'r', scope: 'r@acme/two' }).start(other, new AbortController().signal);
    expect(second.map(id)).toEqual(sink.stored.map(id));
    expect(sink.checkpoints.has(checkpointKey('r@acme/one', join(dir, 'mbox')))).toBe(true);
    expect(sink.checkpoints.has(checkpointKey('r@acme/two', join(dir, 'mbox')))).toBe(true);
  });

  it('stops when the signal aborts', async () => {
    const dir = await copySamples();
    const controller = new AbortController();
    const sink = new MemorySink();
    const accept = sink.accept.bind(sink);
    sink.accept = async (batch, options) => {
      const results = await accept(batch, options);
      controller.abort();
      return results;
    };
    await createFilesAdapter({ paths: [join(dir, 'mbox')], route: 'r', batchSize: 1 }).start(sink, controller.signal);
    expect(sink.stored).toHaveLength(1);
  });
});
