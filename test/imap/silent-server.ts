/**
 * Peers that accept a connection and then never answer: an IMAP server that greets, answers
 * CAPABILITY and leaves every login unanswered, and an HTTP server that never answers a request
 * (a token endpoint stuck mid-request). They count what they were asked.
 */
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';

export interface SilentServer {
  readonly port: number;
  /** IMAP: LOGIN / AUTHENTICATE commands received. HTTP: requests received. */
  readonly asked: number;
  close(): Promise<void>;
}

function listening(server: { listen(port: number, host: string, cb: () => void): unknown; address(): unknown }): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

export async function startSilentImap(): Promise<SilentServer> {
  let asked = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.write('* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] silent test server ready\r\n');
    let buffered = '';
    socket.on('data', (d: Buffer) => {
      buffered += d.toString('latin1');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        const [tag, command] = line.split(' ');
        if (/^(LOGIN|AUTHENTICATE)$/i.test(command ?? '')) asked += 1;
        else if (/^CAPABILITY$/i.test(command ?? '')) socket.write(`* CAPABILITY IMAP4rev1 AUTH=PLAIN\r\n${tag} OK done\r\n`);
      }
    });
  });
  const port = await listening(server);
  return {
    port,
    get asked() {
      return asked;
    },
    close: () =>
      new Promise<void>((resolve) => {
        sockets.forEach((s) => s.destroy());
        server.close(() => resolve());
      }),
  };
}

export async function startSilentHttp(): Promise<SilentServer> {
  let asked = 0;
  const server = createHttpServer(() => {
    asked += 1;
  });
  const port = await listening(server);
  return {
    port,
    get asked() {
      return asked;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
