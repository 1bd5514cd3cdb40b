/** `server.listen` (host:port, IPv6 in brackets) into what fastify's listen() takes. */
import { GatewayError } from '../errors.js';

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(listen);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535)
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `server.listen must be host:port (port 0-65535), got "${listen}"`);
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
  return { host, port };
}

/** The base URL of a listening address, e.g. http://127.0.0.1:8080. */
export function baseUrl(address: { address: string; port: number; family: string }): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/**
 * The coded error for a failed listen(): which address, why, and how to choose another.
 * Anything but the system errors of a busy or forbidden address is returned unchanged.
 */
export function listenError(
  err: unknown,
  host: string,
  port: number,
  fix = 'Set server.listen in the configuration or MAILGATE_LISTEN to another host:port, e.g. MAILGATE_LISTEN=127.0.0.1:0 for a free port',
): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') return err;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const why =
    code === 'EADDRINUSE'
      ? 'is already in use by another process'
      : code === 'EACCES'
        ? 'is not allowed for this user'
        : 'is not an address of this machine';
  return new GatewayError('MAILGATE_ERR_SERVICE_LISTEN', `cannot listen on ${address}: the address ${why} (${code}). ${fix}`, {
    cause: err,
    details: { host, port, code },
  });
}
