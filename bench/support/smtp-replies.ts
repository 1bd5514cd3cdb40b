/** SMTP replies as they arrive on a socket: the code of each final reply line (continuation lines `250-…` skipped). */
import type { Socket } from 'node:net';

export function onReplyCodes(socket: Socket, onCode: (code: number) => void): void {
  let buf = '';
  socket.on('data', (d: Buffer) => {
    buf += d.toString('latin1');
    let nl: number;
    while ((nl = buf.indexOf('\r\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      if (line[3] !== '-') onCode(Number(line.slice(0, 3)));
    }
  });
}
