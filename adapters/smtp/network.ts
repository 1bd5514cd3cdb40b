/** Client addresses: the allow-list (CIDR, IPv4 and IPv6) and loopback; the listen address. */
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import { GatewayError } from '../../src/errors.js';

/** `::ffff:10.1.2.3` (an IPv4 client of a dual-stack listener) → `10.1.2.3`. */
export function plainAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

export function isLoopback(address: string): boolean {
  const a = plainAddress(address);
  return a === '::1' || (isIPv4(a) && a.startsWith('127.'));
}

/** A test of client addresses against CIDR ranges; an invalid range is a configuration error. */
export function allowList(ranges: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const range of ranges) {
    const [net = '', bits] = range.split('/');
    const type = isIPv4(net) ? 'ipv4' : isIPv6(net) ? 'ipv6' : undefined;
    const prefix = bits === undefined ? (type === 'ipv4' ? 32 : 128) : Number(bits);
    if (type === undefined || prefix > (type === 'ipv4' ? 32 : 128)) {
      throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `adapters.smtp[].allow_from: "${range}" is not an address or CIDR range`);
    }
    list.addSubnet(net, prefix, type);
  }
  return (address) => {
    const a = plainAddress(address);
    if (isIPv4(a)) return list.check(a, 'ipv4');
    return isIPv6(a) && list.check(a, 'ipv6');
  };
}

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(listen);
  if (!m || Number(m[2]) > 65535)
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `adapters.smtp[].listen must be host:port, got "${listen}"`);
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
  return { host, port: Number(m[2]) };
}

/**
 * Replies to commands that arrived together leave together: a pipelining client (RFC 2920) sends
 * MAIL, RCPT and DATA in one packet, and smtp-server answers each as it reads it, one write (one
 * system call, one packet) each. The socket is corked while a chunk is read and uncorked once
 * the synchronous replies to it are written, so they go out in one write. Asynchronous replies
 * (the answer to the message itself) are not held. Set up once the socket flows (smtp-server
 * pipes it into its parser), so that this listener never makes it flow before its reader is there.
 */
export function coalesceReplies(socket: Socket): void {
  socket.once('resume', () =>
    socket.prependListener('data', () => {
      socket.cork();
      process.nextTick(() => socket.uncork());
    }),
  );
}
