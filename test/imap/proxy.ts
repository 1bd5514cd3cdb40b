/**
 * A TCP proxy in front of the test Dovecot: counts the bytes the server sends, records the
 * commands clients send, cuts every connection on demand, can swallow traffic silently (a dead
 * peer that never closes), and can answer the next connections itself with a refusal such as a
 * throttling BYE.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface Proxy {
  readonly port: number;
  /** Bytes sent by the server towards clients so far. */
  readonly bytesFromServer: number;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Commands clients sent so far, without tags and arguments: `EXAMINE`, `UID SEARCH`, `NOOP`… */
  readonly commands: readonly string[];
  /** The same commands' whole lines, arguments included (tags removed). */
  readonly commandLines: readonly string[];
  cutAll(): void;
  /** While on, nothing is forwarded in either direction and no socket closes. */
  blackhole(on: boolean): void;
  /** The next `n` connections get `line` (e.g. `* BYE [UNAVAILABLE] Too many connections`) and are closed. */
  refuseNext(n: number, line: string): void;
  /** Cuts every connection once the server has sent this many more bytes. */
  cutAfter(bytes: number): void;
  /** Resets every connection: the client side gets a TCP RST (ECONNRESET), not an orderly close. */
  resetAll(): void;
  /**
   * Once the server has sent this many more bytes, the connections open then stop forwarding in
   * both directions, without closing (a server stalled mid-answer); later connections work.
   */
  stallAfter(bytes: number): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<Proxy> {
  const pairs = new Set<[Socket, Socket]>();
  let bytes = 0;
  let count = 0;
  let hole = false;
  let refusals: { n: number; line: string } = { n: 0, line: '' };
  let cutAt = Infinity;
  let stallAt = Infinity;
  const stalled = new WeakSet<Socket>();
  const commands: string[] = [];
  const commandLines: string[] = [];
  /** A recorder of one client's command lines (literals may add noise; tests look for named commands). */
  const recorder = (): ((text: string) => void) => {
    let partial = '';
    return (text) => {
      const lines = (partial + text).split('\r\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^[A-Za-z0-9.]+ (UID [A-Za-z]+|[A-Za-z]+)/.exec(line);
        if (!m) continue;
        commands.push(m[1]!.toUpperCase());
        commandLines.push(line.slice(line.indexOf(' ') + 1));
      }
    };
  };
  const cutAll = (): void => {
    for (const [a, b] of pairs) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };
  const server = createServer((client) => {
    count += 1;
    client.on('error', () => undefined);
    if (refusals.n > 0) {
      refusals.n -= 1;
      client.end(`${refusals.line}\r\n`);
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: targetPort });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    const pair: [Socket, Socket] = [client, upstream];
    const record = recorder();
    pairs.add(pair);
    upstream.on('data', (d: Buffer) => {
      if (hole || stalled.has(client)) return;
      bytes += d.length;
      if (bytes >= stallAt) {
        // Forward up to the mark, then nothing more on the connections open now.
        client.write(d.subarray(0, d.length - (bytes - stallAt)));
        stallAt = Infinity;
        for (const [c] of pairs) stalled.add(c);
        return;
      }
      client.write(d);
      if (bytes >= cutAt) {
        cutAt = Infinity;
        cutAll();
      }
    });
    client.on('data', (d: Buffer) => {
      if (hole || stalled.has(client)) return;
      record(d.toString('latin1'));
      upstream.write(d);
    });
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    upstream.on('close', end);
    client.on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    port,
    get bytesFromServer() {
      return bytes;
    },
    get connections() {
      return count;
    },
    get commands() {
      return commands;
    },
    get commandLines() {
      return commandLines;
    },
    cutAll,
    cutAfter(n) {
      cutAt = bytes + n;
    },
    resetAll() {
      for (const [a, b] of pairs) {
        a.resetAndDestroy();
        b.destroy();
      }
      pairs.clear();
    },
    stallAfter(n) {
      stallAt = bytes + n;
    },
    blackhole(on) {
      hole = on;
    },
    refuseNext(n, line) {
      refusals = { n, line };
    },
    close: () =>
      new Promise<void>((r) => {
        for (const [a, b] of pairs) {
          a.destroy();
          b.destroy();
        }
        server.close(() => r());
      }),
  };
}
