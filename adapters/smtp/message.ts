/**
 * One mail transaction's DATA: read within the size limit (past it, bytes are counted and
 * dropped, never buffered), then one Inbound per route its recipients belong to.
 */
import { contentKey } from '../../src/pipeline/origin.js';
import type { Readable } from 'node:stream';
import type { SMTPServerSession } from 'smtp-server';
import type { Envelope, Inbound } from '../../src/pipeline/types.js';
import type { RecipientMatch } from './recipients.js';
import { plainAddress } from './network.js';

export type DataRead =
  | { kind: 'complete'; raw: Buffer; bytes: number }
  | { kind: 'oversized'; bytes: number }
  | { kind: 'aborted'; bytes: number };

/** Reads the message stream to its end; `aborted` when the client went away before the final dot. */
export function readData(stream: Readable, maxBytes: number): Promise<DataRead> {
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const finish = (r: DataRead) => {
      if (done) return;
      done = true;
      chunks = [];
      resolve(r);
    };
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) chunks.push(chunk);
      else chunks = [];
    });
    stream.on('end', () =>
      finish(bytes > maxBytes ? { kind: 'oversized', bytes } : { kind: 'complete', raw: Buffer.concat(chunks, bytes), bytes }),
    );
    stream.on('error', () => finish({ kind: 'aborted', bytes }));
    stream.on('close', () => finish({ kind: 'aborted', bytes }));
  });
}

/** The recipients of a transaction grouped by route, in the order of their first recipient. */
export function byRoute(matches: readonly RecipientMatch[]): Map<string, RecipientMatch[]> {
  const groups = new Map<string, RecipientMatch[]>();
  for (const m of matches) groups.set(m.route, [...(groups.get(m.route) ?? []), m]);
  return groups;
}

export interface TransactionFacts {
  account: string;
  session: SMTPServerSession;
  receivedAt: Date;
  /** Prepended Received: header (add_received), or undefined to keep the bytes exact. */
  received?: Buffer;
  /** SPF/DKIM/DMARC/ARC verdicts (authenticate). */
  verdicts?: { spf?: string; dkim?: string; dmarc?: string; arc: string };
}

/** The envelope of the message for one route: its recipients only (the others are other routes' business). */
export function envelopeOf(session: SMTPServerSession, recipients: readonly RecipientMatch[]): Envelope {
  const from = session.envelope.mailFrom;
  const plus = [...new Set(recipients.flatMap((r) => (r.plus === undefined ? [] : [r.plus])))];
  const extra: Record<string, string> = { session: session.id, transaction: String(session.transaction) };
  if (plus.length > 0) extra['plus'] = plus.join(',');
  if (session.user !== undefined) extra['user'] = String(session.user);
  const envelope: Envelope = {
    provider: 'smtp',
    from: from === false ? '' : from.address,
    to: recipients.map((r) => r.address),
    remoteAddress: plainAddress(session.remoteAddress),
    tls: session.secure,
    extra,
  };
  if (typeof session.hostNameAppearsAs === 'string' && session.hostNameAppearsAs !== '') envelope.helo = session.hostNameAppearsAs;
  return envelope;
}

function withVerdicts(envelope: Envelope, v: TransactionFacts['verdicts']): Envelope {
  if (v === undefined) return envelope;
  const { arc, ...rest } = v;
  return { ...envelope, ...rest, extra: { ...envelope.extra, arc } };
}

export function inboundOf(facts: TransactionFacts, raw: Buffer, route: string, recipients: readonly RecipientMatch[]): Inbound {
  const { session } = facts;
  const bytes = facts.received ? Buffer.concat([facts.received, raw]) : raw;
  const key = contentKey(bytes);
  return {
    raw: bytes,
    key,
    route,
    receivedAt: facts.receivedAt,
    // No alias: a queue id names one client's transaction, not the message (deduplicated by its bytes).
    origin: {
      adapter: 'smtp',
      instance: facts.account,
      id: key,
      envelope: withVerdicts(envelopeOf(session, recipients), facts.verdicts),
      details: {},
    },
  };
}

/** A Received: trace header (RFC 5321 4.4) for add_received. */
export function receivedHeader(session: SMTPServerSession, serverName: string, at: Date): Buffer {
  const helo = typeof session.hostNameAppearsAs === 'string' && session.hostNameAppearsAs !== '' ? session.hostNameAppearsAs : 'unknown';
  const ip = plainAddress(session.remoteAddress);
  const proto = session.transmissionType || 'SMTP';
  const date = at.toUTCString().replace('GMT', '+0000');
  return Buffer.from(`Received: from ${helo} ([${ip}])\r\n\tby ${serverName} with ${proto} id ${session.id};\r\n\t${date}\r\n`);
}
