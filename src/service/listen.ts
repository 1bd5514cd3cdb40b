/** `server.listen` (host:port, IPv6 in brackets) into what fastify's listen() takes. */
import { GatewayError } from '../errors.js';

export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(listen);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `server.listen must be host:port (port 0-65535), got "${listen}"`);
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
  return { host, port };
}

/** The base URL of a listening address, e.g. http://127.0.0.1:8080. */
export function baseUrl(address: { address: string; port: number; family: string }): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
