/** A raw SMTP/LMTP client over a socket, for protocol edge cases nodemailer hides. */
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export interface Reply {
  code: number;
  text: string;
}

export class RawClient {
  private buffer = '';
  private waiters: Array<(r: Reply) => void> = [];
  private replies: Reply[] = [];
  closed: Promise<void>;

  private constructor(private socket: Socket) {
    this.closed = new Promise((r) => socket.once('close', () => r()));
    this.attach(socket);
  }

  /**
   * One message on a connection of its own (EHLO, MAIL FROM:<a@example.org>, RCPT
   * TO:<support@example.com>, DATA): the reply code to the message.
   */
  static async send(port: number, raw: string): Promise<number> {
    const { client } = await RawClient.open(port);
    try {
      await client.cmd('EHLO client.example.org');
      await client.cmd('MAIL FROM:<a@example.org>');
      await client.cmd('RCPT TO:<support@example.com>');
      await client.cmd('DATA');
      return (await client.data(raw)).code;
    } finally {
      client.destroy();
    }
  }

  /** `localAddress`: the client's own address (127.0.0.2 … to look like another client on loopback). */
  static async open(port: number, host = '127.0.0.1', localAddress?: string): Promise<{ client: RawClient; greeting: Reply }> {
    const socket = connect({ port, host, ...(localAddress !== undefined && { localAddress }) });
    socket.on('error', () => undefined);
    const client = new RawClient(socket);
    return { client, greeting: await client.next() };
  }

  private attach(socket: Socket): void {
    socket.on('data', (d: Buffer) => {
      this.buffer += d.toString('latin1');
      let nl: number;
      let lines: string[] = [];
      while ((nl = this.buffer.indexOf('\r\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 2);
        lines.push(line.slice(4));
        if (line[3] !== '-') {
          this.push({ code: Number(line.slice(0, 3)), text: lines.join('\n') });
          lines = [];
        }
      }
    });
  }

  private push(r: Reply): void {
    const w = this.waiters.shift();
    if (w) w(r);
    else this.replies.push(r);
  }

  /** The next reply; rejects when the connection closes first. */
  next(): Promise<Reply> {
    const r = this.replies.shift();
    if (r) return Promise.resolve(r);
    return new Promise((resolve, reject) => {
      this.waiters.push(resolve);
      void this.closed.then(() => reject(new Error('connection closed')));
    });
  }

  async cmd(line: string): Promise<Reply> {
    this.socket.write(`${line}\r\n`);
    return this.next();
  }

  write(data: Buffer | string): boolean {
    return this.socket.write(data);
  }

  /** STARTTLS, then the same client over TLS (certificate not verified: tests use a self-signed one). */
  async startTls(): Promise<Reply> {
    const r = await this.cmd('STARTTLS');
    if (r.code !== 220) return r;
    const secure = tlsConnect({ socket: this.socket, rejectUnauthorized: false });
    await new Promise<void>((res, rej) => secure.once('secureConnect', () => res()).once('error', rej));
    this.socket.removeAllListeners('data');
    this.socket = secure;
    secure.on('error', () => undefined);
    this.attach(secure);
    return r;
  }

  /** Sends a message after DATA's 354: dot-stuffed, ended by CRLF.CRLF. */
  async data(message: string | Buffer): Promise<Reply> {
    const text = Buffer.isBuffer(message) ? message.toString('latin1') : message;
    this.socket.write(Buffer.from(text.replace(/^\./gm, '..') + (text.endsWith('\r\n') ? '' : '\r\n') + '.\r\n', 'latin1'));
    return this.next();
  }

  /** Resolves when the socket's write buffer has drained (backpressure). */
  drained(): Promise<void> {
    return new Promise((r) => this.socket.once('drain', () => r()));
  }

  destroy(): void {
    this.socket.destroy();
  }
}
