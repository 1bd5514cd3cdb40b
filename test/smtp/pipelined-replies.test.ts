/**
 * Replies to pipelined commands leave in one write: a client that sends several commands in one
 * packet (MAIL, RCPT, DATA) gets the replies written while that packet is read in one system
 * call, where each used to be a write (and a packet) of its own. Real sockets on loopback; the
 * server side counts the writes its socket hands to the operating system.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { coalesceReplies } from '../../adapters/smtp/network.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A line server answering each line at once, as smtp-server does; the writes reaching its socket, by chunks each. */
async function lineServer(coalesce: boolean): Promise<{ port: number; writes: number[] }> {
  const writes: number[] = [];
  server = createServer((socket: Socket) => {
    if (coalesce) coalesceReplies(socket);
    const one = socket._write.bind(socket);
    const many = socket._writev!.bind(socket);
    socket._write = (chunk, encoding, cb) => (writes.push(1), one(chunk, encoding, cb));
    socket._writev = (chunks, cb) => (writes.push(chunks.length), many(chunks, cb));
    const parser = new Writable({
      write(chunk: Buffer, _encoding, next) {
        for (const line of chunk.toString('latin1').split('\r\n').filter(Boolean)) socket.write(`250 ${line}\r\n`);
        next();
      },
    });
    socket.pipe(parser);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { port: (server!.address() as { port: number }).port, writes };
}

/** Sends one packet of three commands and waits for the three replies. */
async function pipeline(port: number): Promise<string> {
  const client = connect(port, '127.0.0.1');
  let got = '';
  await new Promise<void>((resolve) => {
    client.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.split('\r\n').length > 3) resolve();
    });
    client.write('MAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n');
  });
  client.destroy();
  return got;
}

describe('replies to pipelined SMTP commands', () => {
  it('leave in one write when the socket coalesces them', async () => {
    const { port, writes } = await lineServer(true);
    expect(await pipeline(port)).toBe('250 MAIL FROM:<a@example.com>\r\n250 RCPT TO:<b@example.com>\r\n250 DATA\r\n');
    expect(writes).toEqual([3]);
  });

  it('leave in a write each otherwise (what the coalescing saves)', async () => {
    const { port, writes } = await lineServer(false);
    await pipeline(port);
    expect(writes.reduce((a, b) => a + b, 0)).toBe(3);
    expect(writes.length).toBeGreaterThan(1);
  });
});
