/** One SMTP client connection for benchmarks: sends a message at a time, reconnecting after a failure. */
import { connect, type Socket } from 'node:net';
import { onReplyCodes } from './smtp-replies.js';

export class SmtpSender {
  private socket: Socket | undefined;
  private waiting: Array<(code: number) => void> = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly port: number) {}

  private reply(): Promise<number> {
    return new Promise((r) => this.waiting.push(r));
  }

  private async open(): Promise<void> {
    const s = connect(this.port, '127.0.0.1');
    this.socket = s;
    this.waiting = [];
    onReplyCodes(s, (code) => this.waiting.shift()?.(code));
    const fail = () => {
      for (const w of this.waiting.splice(0)) w(0);
      if (this.socket === s) this.socket = undefined;
    };
    s.on('error', fail);
    s.on('close', fail);
    if ((await this.reply()) !== 220) throw new Error('no SMTP greeting');
    s.write('EHLO soak.example.org\r\n');
    if ((await this.reply()) !== 250) throw new Error('EHLO refused');
  }

  /** Sends one message (dot-stuffing not needed: the bench's lines never start with a dot); true on 250. */
  send(raw: Buffer): Promise<boolean> {
    const run = async (): Promise<boolean> => {
      if (this.socket === undefined) await this.open();
      const s = this.socket!;
      s.write('MAIL FROM:<c@example.com>\r\n');
      if ((await this.reply()) !== 250) return this.reset();
      s.write('RCPT TO:<support@acme.example>\r\n');
      if ((await this.reply()) !== 250) return this.reset();
      s.write('DATA\r\n');
      if ((await this.reply()) !== 354) return this.reset();
      s.write(Buffer.concat([raw, Buffer.from('\r\n.\r\n')]));
      const code = await this.reply();
      return code === 250 ? true : this.reset();
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  private reset(): boolean {
    this.socket?.write('RSET\r\n');
    this.socket?.destroy();
    this.socket = undefined;
    return false;
  }

  close(): void {
    this.socket?.end('QUIT\r\n');
    this.socket = undefined;
  }
}
