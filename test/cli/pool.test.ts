import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { previewSync } from '../../src/preview/index.js';
import { importPool, ROOT } from './support/dist.js';

const message = (n: number, extra = '') =>
  Buffer.from(
    `${extra}From: Sender ${n} <s${n}@example.com>\r\nTo: r@example.com\r\nSubject: message ${n}\r\nDate: Mon, 04 Mar 2024 09:00:00 +0000\r\nMessage-ID: <m${n}@example.com>\r\n\r\nBody ${n}\r\n`,
  );

describe('parse pool', () => {
  it('parses in workers and yields results in submission order', async () => {
    const { ParsePool, parseOrdered } = await importPool();
    const pool = new ParsePool({ size: 2, queueSize: 2 });
    try {
      const items = Array.from({ length: 40 }, (_, n) => ({ n, raw: message(n) }));
      const seen: number[] = [];
      for await (const { item, outcome } of parseOrdered(pool, items, (i) => i.raw, { transfer: true })) {
        expect(outcome?.ok).toBe(true);
        if (outcome?.ok) expect(outcome.result.comment.messages[0]?.subject?.text).toBe(`message ${item.n}`);
        seen.push(item.n);
      }
      expect(seen).toEqual(items.map((i) => i.n));
    } finally {
      await pool.close();
    }
  });

  it('answers an encoded parse with the facts the console lists and searches by', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1 });
    try {
      const encoded = await pool.parseEncoded(message(7));
      expect(encoded.facts).toEqual({
        sender: 's7@example.com',
        senderName: 'Sender 7',
        subject: 'message 7',
        messageId: 'm7@example.com',
        timestamp: Date.parse('2024-03-04T09:00:00Z'),
      });
    } finally {
      await pool.close();
    }
  });

  it('passes items without bytes through in their place', async () => {
    const { ParsePool, parseOrdered } = await importPool();
    const pool = new ParsePool({ size: 1 });
    try {
      const items = [{ raw: message(1) }, { raw: undefined }, { raw: message(2) }];
      const out: Array<boolean | undefined> = [];
      for await (const { outcome } of parseOrdered(pool, items, (i) => i.raw)) out.push(outcome?.ok);
      expect(out).toEqual([true, undefined, true]);
    } finally {
      await pool.close();
    }
  });

  it('copies unless asked to transfer, and transfers when asked', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1 });
    try {
      const kept = Buffer.concat([message(1), Buffer.alloc(8192)]);
      await (
        await pool.submit(kept)
      ).done;
      expect(kept.byteLength).toBeGreaterThan(0);
      const moved = new Uint8Array(message(2));
      const ticket = await pool.submit(moved, { transfer: true });
      expect(moved.byteLength).toBe(0);
      expect((await ticket.done).ok).toBe(true);
      expect((await pool.parse(message(3))).comment.messages[0]?.subject?.text).toBe('message 3');
    } finally {
      await pool.close();
    }
  });

  it('refuses a message over the size budget before dispatch', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, maxMessageBytes: 100 });
    try {
      const outcome = await (await pool.submit(message(1, 'X-Pad: ' + 'p'.repeat(200) + '\r\n'))).done;
      expect(outcome.ok ? undefined : outcome.error.code).toBe('MAILGATE_ERR_MIME_TOO_LARGE');
      await expect(pool.parse(Buffer.alloc(101, 0x41))).rejects.toMatchObject({ code: 'MAILGATE_ERR_MIME_TOO_LARGE' });
    } finally {
      await pool.close();
    }
  });

  it('terminates a worker over the time budget, reports MAILGATE_ERR_MIME_TIMEOUT and carries on', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, timeoutMs: 1500, testHooks: true });
    try {
      const hung = await pool.submit(message(1, 'X-Mailgate-Internal-Test-Hook: hang\r\n'));
      const next = await pool.submit(message(2));
      const first = await hung.done;
      expect(first.ok ? undefined : first.error.code).toBe('MAILGATE_ERR_MIME_TIMEOUT');
      expect((await next.done).ok).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('reports a worker that dies mid-message as MAILGATE_ERR_MIME_WORKER_CRASHED and replaces it', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, testHooks: true });
    try {
      const crashed = await pool.submit(message(1, 'X-Mailgate-Internal-Test-Hook: crash\r\n'));
      const next = await pool.submit(message(2));
      const first = await crashed.done;
      expect(first.ok ? undefined : first.error.code).toBe('MAILGATE_ERR_MIME_WORKER_CRASHED');
      expect((await next.done).ok).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('takes a worker started before it as its first worker, which parses (regression: the adopted worker never answered)', async () => {
    const { ParsePool, startParseWorker } = await importPool();
    startParseWorker();
    const pool = new ParsePool({ size: 2 });
    try {
      const outcomes = await Promise.all([1, 2, 3].map(async (n) => (await pool.submit(message(n))).done));
      expect(outcomes.map((o) => o.ok && o.result.comment.messages[0]?.subject?.text)).toEqual(['message 1', 'message 2', 'message 3']);
    } finally {
      await pool.close();
    }
  });

  it('does not take a worker started before it when its workers need other settings (test hooks)', async () => {
    const { ParsePool, startParseWorker } = await importPool();
    startParseWorker();
    const pool = new ParsePool({ size: 1, testHooks: true });
    try {
      // Only a worker of this pool honours the hook; the early one would parse the message.
      const crashed = await (await pool.submit(message(1, 'X-Mailgate-Internal-Test-Hook: crash\r\n'))).done;
      expect(crashed.ok ? undefined : crashed.error.code).toBe('MAILGATE_ERR_MIME_WORKER_CRASHED');
    } finally {
      await pool.close();
    }
  });

  it('returns the parser error code for bad input', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1 });
    try {
      const outcome = await (await pool.submit(Buffer.alloc(0))).done;
      expect(outcome.ok ? undefined : outcome.error.code).toBe('MAILGATE_ERR_MIME_EMPTY');
    } finally {
      await pool.close();
    }
  });

  it('makes submit wait while the queue is full (backpressure)', async () => {
    const { ParsePool } = await importPool();
    // One worker holds 32 batches of one message (two as they come, 30 more while full ones
    // are queued); the queue holds one more.
    const pool = new ParsePool({ size: 1, queueSize: 1, batchSize: 1, timeoutMs: 60_000, testHooks: true });
    try {
      const first = await pool.submit(message(1, 'X-Mailgate-Internal-Test-Hook: hang\r\n'));
      for (let n = 2; n <= 33; n++) await pool.submit(message(n));
      let admitted = false;
      const last = pool.submit(message(34)).then((t) => ((admitted = true), t));
      // Only a worker's results make room, and the one worker hangs on message 1: a pool that
      // let the 34th in would have done so before the event loop goes round.
      await new Promise((r) => setImmediate(r));
      expect(admitted).toBe(false);
      await pool.close();
      const closedOutcome = await first.done;
      expect(closedOutcome.ok).toBe(false);
      await last;
      expect(admitted).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('sends messages in batches and still fails only the message that hangs', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, batchSize: 8, timeoutMs: 1000, testHooks: true });
    try {
      const tickets = [];
      for (let n = 0; n < 12; n++) tickets.push(await pool.submit(message(n, n === 5 ? 'X-Mailgate-Internal-Test-Hook: hang\r\n' : '')));
      const outcomes = await Promise.all(tickets.map((t) => t.done));
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual([
        'ok',
        'ok',
        'ok',
        'ok',
        'ok',
        'MAILGATE_ERR_MIME_TIMEOUT',
        'ok',
        'ok',
        'ok',
        'ok',
        'ok',
        'ok',
      ]);
      outcomes.forEach((o, n) => {
        if (o.ok) expect(o.result.comment.messages[0]?.subject?.text).toBe(`message ${n}`);
      });
    } finally {
      await pool.close();
    }
  });

  it('parses the batch-mates of a message that kills its worker in a fresh worker', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, batchSize: 8, testHooks: true });
    try {
      const tickets = [];
      for (let n = 0; n < 10; n++) tickets.push(await pool.submit(message(n, n === 3 ? 'X-Mailgate-Internal-Test-Hook: crash\r\n' : '')));
      const outcomes = await Promise.all(tickets.map((t) => t.done));
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual([
        'ok',
        'ok',
        'ok',
        'MAILGATE_ERR_MIME_WORKER_CRASHED',
        'ok',
        'ok',
        'ok',
        'ok',
        'ok',
        'ok',
      ]);
    } finally {
      await pool.close();
    }
  });

  it('a worker that dies between messages: each message it held is parsed again alone, and only the one that kills it fails', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, batchSize: 8, testHooks: true });
    try {
      const tickets = [];
      for (let n = 0; n < 12; n++)
        tickets.push(await pool.submit(message(n, n === 2 ? 'X-Mailgate-Internal-Test-Hook: crash-after-batch\r\n' : '')));
      const outcomes = await Promise.all(tickets.map((t) => t.done));
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(
        Array.from({ length: 12 }, (_, n) => (n === 2 ? 'MAILGATE_ERR_MIME_WORKER_CRASHED' : 'ok')),
      );
      outcomes.forEach((o, n) => {
        if (o.ok) expect(o.result.comment.messages[0]?.subject?.text).toBe(`message ${n}`);
      });
    } finally {
      await pool.close();
    }
  });

  it('never closes for messages that kill their workers: each fails alone, a fresh worker takes the next', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, batchSize: 4, testHooks: true });
    try {
      const tickets = [];
      for (let n = 0; n < 16; n++) tickets.push(await pool.submit(message(n, n < 8 ? 'X-Mailgate-Internal-Test-Hook: crash\r\n' : '')));
      const outcomes = await Promise.all(tickets.map((t) => t.done));
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(
        Array.from({ length: 16 }, (_, n) => (n < 8 ? 'MAILGATE_ERR_MIME_WORKER_CRASHED' : 'ok')),
      );
      const again = await (await pool.submit(message(20, 'X-Mailgate-Internal-Test-Hook: crash\r\n'), { alone: true })).done;
      expect(again.ok ? undefined : again.error.code).toBe('MAILGATE_ERR_MIME_WORKER_CRASHED');
      expect((await (await pool.submit(message(21))).done).ok).toBe(true);
    } finally {
      await pool.close();
    }
    const closed = await (await pool.submit(message(22))).done;
    expect(closed.ok ? undefined : closed.error.code).toBe('MAILGATE_ERR_MIME_POOL_CLOSED');
  });

  it('keeps more than two full batches with a worker while the queue has them (regression: a worker held two and idled while the main thread was busy)', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, batchSize: 16 });
    try {
      await pool.parse(message(0)); // the worker is ready
      const slot = (pool as unknown as { slots: Array<{ batches: number }> }).slots[0]!;
      const tickets = Array.from({ length: 100 }, (_, n) => pool.submit(message(n + 1)));
      // Handed over at once, before any answer can come back: two batches as the messages come, then full ones.
      expect(slot.batches).toBe(8);
      const outcomes = await Promise.all((await Promise.all(tickets)).map((t) => t.done));
      expect(outcomes.map((o) => o.ok && o.result.comment.messages[0]?.subject?.text)).toEqual(
        Array.from({ length: 100 }, (_, n) => `message ${n + 1}`),
      );
    } finally {
      await pool.close();
    }
  });

  it('adds no batch beyond two to a worker that holds 4 MiB of messages', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, batchSize: 16 });
    try {
      await pool.parse(message(0));
      const slot = (pool as unknown as { slots: Array<{ batches: number }> }).slots[0]!;
      // 3 MiB each: one per batch (4 MiB at most), and two of them already hold more than 4 MiB.
      const big = (n: number) => message(n, `X-Pad: ${'x'.repeat(3 * 1024 * 1024)}\r\n`);
      const tickets = Array.from({ length: 5 }, (_, n) => pool.submit(big(n + 1)));
      expect(slot.batches).toBe(2);
      const outcomes = await Promise.all((await Promise.all(tickets)).map((t) => t.done));
      expect(outcomes.every((o) => o.ok)).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('a pool whose workers warm up answers each message, during the warm-up and after it, as a cold pool does', async () => {
    const { ParsePool } = await importPool();
    const warm = new ParsePool({ size: 1, batchSize: 1, warmUp: true, timeoutMs: 2_000 });
    const cold = new ParsePool({ size: 1, batchSize: 1 });
    try {
      // The first message arrives while the worker is warming up; the others once it has had time to finish.
      const during = await warm.parseEncoded(message(1));
      await new Promise((r) => setTimeout(r, 500));
      const after = await Promise.all([2, 3, 4].map((n) => warm.parseEncoded(message(n))));
      expect(during).toEqual(await cold.parseEncoded(message(1)));
      expect(after).toEqual(await Promise.all([2, 3, 4].map((n) => cold.parseEncoded(message(n)))));
      expect(after.map((e) => e.facts.subject)).toEqual(['message 2', 'message 3', 'message 4']);
    } finally {
      await warm.close();
      await cold.close();
    }
  });

  it('answers an encoded parse exactly as encodePreview does on the calling thread, for every sample message', async () => {
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1 });
    const dir = join(ROOT, 'samples/mime');
    const receivedAt = new Date('2026-03-02T10:00:00Z');
    try {
      const names = [...readdirSync(dir).filter((f) => f.endsWith('.eml')), '(no sender)'];
      const raws = names.map((f) => (f === '(no sender)' ? Buffer.from('Subject: no sender\r\n\r\nBody\r\n') : readFileSync(join(dir, f))));
      const answers = await Promise.all(raws.map((raw) => pool.parseEncoded(raw, { receivedAt })));
      // Absent members (a thread entry without a sender) stay absent, empty warnings stay an array.
      answers.forEach((answer, i) => expect(answer, names[i]).toStrictEqual(encodePreview(previewSync(raws[i]!, { receivedAt }))));
      expect(answers.some((a) => a.thread !== undefined && a.thread.from === undefined)).toBe(true);
      expect(answers.some((a) => a.warnings.length > 0)).toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('validates its options', async () => {
    const { ParsePool } = await importPool();
    const invalid = (option: string) =>
      expect.objectContaining({ code: 'MAILGATE_ERR_CONFIG_INVALID', message: expect.stringContaining(option) });
    expect(() => new ParsePool({ size: 0 })).toThrow(invalid('size'));
    expect(() => new ParsePool({ timeoutMs: 1.5 })).toThrow(invalid('timeoutMs'));
    expect(() => new ParsePool({ batchSize: 0 })).toThrow(invalid('batchSize'));
    expect(() => new ParsePool({ maxMessageBytes: -1 })).toThrow(invalid('maxMessageBytes'));
  });
});
