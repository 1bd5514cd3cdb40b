import { describe, expect, it } from 'vitest';
import { base64DecodedSize } from '../../adapters/imap/assemble.js';
import { parseImapAccount } from '../../adapters/imap/config.js';
import { uidSet } from '../../adapters/imap/uids.js';
import { TAIL_PIECE_MESSAGES, tailPieces } from '../../adapters/imap/in-flight.js';
import { piecesOf } from '../../adapters/imap/sync.js';
import { resolveFolders } from '../../adapters/imap/folders.js';
import { BACKOFF, backoffDelay, classify } from '../../adapters/imap/retry.js';
import { planMessage, STUB_MIN_BYTES, TAIL_ASK, TAIL_BYTES } from '../../adapters/imap/structure.js';
import { GatewayError } from '../../src/errors.js';

function encoded(bytes: number, width = 76, sep = '\r\n'): Buffer {
  const b64 = Buffer.alloc(bytes, 7).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += width) lines.push(b64.slice(i, i + width));
  return Buffer.from(lines.join(sep) + sep, 'latin1');
}

function sizeOf(body: Buffer): number | undefined {
  const start = Math.max(0, body.length - TAIL_BYTES);
  return base64DecodedSize(body.subarray(0, 256), body.subarray(start, start + TAIL_ASK), start, TAIL_ASK);
}

describe('base64 decoded size from head and tail', () => {
  it('is exact for every padding, line width and line ending', () => {
    for (const bytes of [8192, 8193, 8194, 100_000, 1_000_001]) {
      for (const width of [64, 72, 76]) {
        for (const sep of ['\r\n', '\n']) expect(sizeOf(encoded(bytes, width, sep))).toBe(bytes);
      }
    }
  });

  it('refuses (undefined) when lines are not uniform or the end was not reached', () => {
    const body = encoded(20_000);
    const ragged = Buffer.concat([Buffer.from('QUJD\r\n'), body]);
    expect(sizeOf(ragged)).toBeUndefined();
    const tail = body.subarray(body.length - TAIL_BYTES);
    expect(base64DecodedSize(body.subarray(0, 256), Buffer.concat([tail, Buffer.alloc(TAIL_ASK)]), 0, TAIL_ASK)).toBeUndefined();
    expect(sizeOf(Buffer.from(body.toString('latin1').replace(/w/g, '*'), 'latin1'))).toBeUndefined();
  });
});

describe('fetch plan from BODYSTRUCTURE', () => {
  const text = { part: '1', type: 'text/plain', encoding: '7bit', size: 10 };
  const att = { part: '2', type: 'application/pdf', encoding: 'base64', size: STUB_MIN_BYTES, disposition: 'attachment' };
  it('stubs large base64 attachments and keeps text parts', () => {
    const plan = planMessage({ type: 'multipart/mixed', parameters: { boundary: 'b' }, childNodes: [text, att] });
    expect(plan).toMatchObject({ mode: 'pieces', stubs: 1 });
  });
  it('takes the whole source when nothing would be omitted, or the structure is not trusted', () => {
    expect(planMessage(undefined)).toMatchObject({ mode: 'source', reason: 'no BODYSTRUCTURE' });
    expect(planMessage({ ...att, part: '1' })).toMatchObject({ mode: 'source', reason: 'single part' });
    expect(
      planMessage({ type: 'multipart/mixed', parameters: { boundary: 'b' }, childNodes: [text, { ...att, size: 100 }] }),
    ).toMatchObject({ mode: 'source' });
    expect(planMessage({ type: 'multipart/mixed', childNodes: [text, att] })).toMatchObject({ mode: 'source' });
    const rfc822 = { part: '3', type: 'message/rfc822', encoding: '7bit', size: 100 };
    expect(planMessage({ type: 'multipart/mixed', parameters: { boundary: 'b' }, childNodes: [text, att, rfc822] })).toMatchObject({
      mode: 'source',
    });
    // A text/html body part is never stubbed, whatever its encoding and size.
    const html = { part: '2', type: 'text/html', encoding: 'base64', size: 50_000 };
    expect(planMessage({ type: 'multipart/alternative', parameters: { boundary: 'b' }, childNodes: [text, html] })).toMatchObject({
      mode: 'source',
    });
  });
});

describe('retry table', () => {
  it('classifies throttling, authentication and timeouts by IMAP codes and words', () => {
    expect(classify({ serverResponseCode: 'THROTTLED', message: 'x' }).kind).toBe('throttle');
    expect(classify({ responseText: '[LIMIT] Rate limit hit', message: 'Command failed' }).kind).toBe('throttle');
    expect(classify({ code: 'ETHROTTLE', throttleReset: 299_961, message: 'x' })).toMatchObject({ kind: 'throttle', hintMs: 299_961 });
    expect(classify(new Error('Connection closed'), 'Too many simultaneous connections').kind).toBe('throttle');
    expect(classify({ authenticationFailed: true, message: 'x' })).toMatchObject({ kind: 'auth', code: 'MAILGATE_ERR_IMAP_AUTH' });
    expect(classify({ code: 'ETIMEOUT', message: 'x' }).code).toBe('MAILGATE_ERR_IMAP_TIMEOUT');
    expect(classify(new Error('ECONNRESET')).code).toBe('MAILGATE_ERR_IMAP_CONNECTION');
    expect(classify(new GatewayError('MAILGATE_ERR_IMAP_OAUTH_TOKEN', 'x', { status: 400 })).kind).toBe('auth');
    expect(classify(new GatewayError('MAILGATE_ERR_IMAP_OAUTH_TOKEN', 'x', { status: 503 })).kind).toBe('transient');
  });

  it('grows exponentially with jitter, is capped, and honours a server hint', () => {
    const t = { kind: 'transient' as const };
    // Transient failures (all accounts at once after a server restart): full jitter over [0, d).
    expect(backoffDelay(0, t, () => 0)).toBe(0);
    expect(backoffDelay(0, t, () => 0.5)).toBe(BACKOFF.transient.baseMs / 2);
    expect(backoffDelay(0, t, () => 1)).toBe(BACKOFF.transient.baseMs);
    expect(backoffDelay(3, t, () => 1)).toBe(BACKOFF.transient.baseMs * 8);
    expect(backoffDelay(50, t, () => 1)).toBe(BACKOFF.transient.capMs);
    expect(backoffDelay(0, { kind: 'throttle', hintMs: 299_961 }, () => 0)).toBe(299_961);
    expect(backoffDelay(0, { kind: 'throttle', hintMs: 10 ** 9 }, () => 0)).toBe(900_000);
    // Throttling and refused logins keep a floor of half the wait.
    expect(backoffDelay(0, { kind: 'throttle' }, () => 0)).toBe(BACKOFF.throttle.baseMs / 2);
    expect(backoffDelay(1, { kind: 'auth' }, () => 0)).toBe(BACKOFF.auth.baseMs);
  });
});

describe('folders and configuration', () => {
  const box = (path: string, specialUse?: string, flags: string[] = []) =>
    ({
      path,
      specialUse,
      flags: new Set(flags),
      name: path,
      pathAsListed: path,
      delimiter: '/',
      parent: [],
      parentPath: '',
      listed: true,
      subscribed: true,
    }) as never;
  const list = [box('INBOX', '\\Inbox'), box('Sent', '\\Sent'), box('Archive'), box('Done'), box('Parent', undefined, ['\\Noselect'])];

  it('expands names, special-use flags and *', () => {
    expect(resolveFolders(list, ['\\Sent', 'INBOX', 'inbox'], { kind: 'none' })).toEqual(['Sent', 'INBOX']);
    expect(resolveFolders(list, ['*'], { kind: 'move', folder: 'Done' })).toEqual(['INBOX', 'Sent', 'Archive']);
    expect(resolveFolders([], ['Missing'], { kind: 'none' })).toEqual(['Missing']);
  });

  it('validates accounts strictly and fills defaults', () => {
    const ok = parseImapAccount({ name: 'support', route: 'r', host: 'imap.example.com', auth: { user: 'u', pass: 'p' } });
    expect(ok).toMatchObject({ port: 993, secure: true, folders: ['INBOX'], after_delivery: 'none', idle: true, batch_size: 100 });
    expect(() => parseImapAccount({ ...ok, after_delivery: 'delete' })).toThrow(/after_delivery/);
    expect(() => parseImapAccount({ ...ok, poll_interval_ms: 0 })).toThrow(/poll_interval_ms/);
    expect(() => parseImapAccount({ ...ok, extra: 1 })).toThrow(/MAILGATE|Unrecognized|extra/);
    const oauth = { user: 'u', oauth2: { tokenUrl: 'https://login.example.com/token', clientId: 'c', grant: 'client_credentials' } };
    expect(() => parseImapAccount({ ...ok, auth: oauth })).toThrow(/clientSecret/);
    // Each refusal is the coded config error, and an out-of-range batch size is refused at all.
    for (const bad of [{ batch_size: -1 }, { batch_size: 0 }, { batch_size: 5001 }, { batch_size: 1.5 }]) {
      expect(() => parseImapAccount({ ...ok, ...bad })).toThrow(expect.objectContaining({ code: 'MAILGATE_ERR_CONFIG_INVALID' }));
    }
  });

  it('writes compact UID sets', () => {
    expect(uidSet([1, 2, 3, 5, 7, 8])).toBe('1:3,5,7:8');
    expect(uidSet([42])).toBe('42');
  });
});

describe('the last slice of a pass in pieces', () => {
  it('halves while two pieces are left, never below TAIL_PIECE_MESSAGES, and keeps every message', () => {
    expect(tailPieces(475)).toEqual([238, 119, 118]);
    expect(tailPieces(1000)).toEqual([500, 250, 125, 125]);
    expect(tailPieces(199)).toEqual([199]);
    expect(tailPieces(1)).toEqual([1]);
    for (let n = 1; n <= 5000; n++) {
      const pieces = tailPieces(n);
      expect(pieces.reduce((a, b) => a + b, 0)).toBe(n);
      if (n >= TAIL_PIECE_MESSAGES) expect(Math.min(...pieces)).toBeGreaterThanOrEqual(TAIL_PIECE_MESSAGES);
      expect(pieces).toEqual([...pieces].sort((a, b) => b - a));
    }
  });
});

describe('the pieces of a slice', () => {
  // UIDs 1..600: every 4th filtered out, the rest fetched; UIDs 597..600 vanished (the slice still covers them).
  const fetched = Array.from({ length: 596 }, (_, i) => i + 1).filter((u) => u % 4 !== 0);
  const slice = {
    messages: fetched.map((uid) => ({ uid, raw: Buffer.from(`m${uid}`), internalDate: undefined, stubbed: false })),
    lastUid: 600,
    filtered: Array.from({ length: 150 }, (_, i) => ({ uid: 4 * (i + 1), reason: 'participants' as const })),
  };

  it('keeps a slice whole unless it ends the pass', () => {
    const [whole, ...rest] = piecesOf(slice, false);
    expect(rest).toEqual([]);
    expect(whole!.messages).toHaveLength(fetched.length);
    expect(whole!.covered).toBe(600);
    expect(whole!.filtered).toHaveLength(150);
  });

  it('ends the pass in pieces: every message and every filtered UID once, in UID order, each piece covering up to its last UID', () => {
    const pieces = piecesOf(slice, true);
    expect(pieces.map((p) => p.messages.length)).toEqual(tailPieces(fetched.length));
    expect(pieces.flatMap((p) => p.messages.map((m) => m.uid))).toEqual(fetched);
    expect(pieces.flatMap((p) => p.filtered)).toHaveLength(150);
    let from = 0;
    for (const [k, p] of pieces.entries()) {
      const last = k === pieces.length - 1;
      expect(p.covered).toBe(last ? 600 : p.messages[p.messages.length - 1]!.uid);
      // The filtered UIDs a piece reports are those between the piece before it and its own checkpoint.
      expect(p.filtered).toHaveLength(slice.filtered.filter((f) => f.uid > from && f.uid <= p.covered).length);
      from = p.covered;
    }
  });

  it('hands an empty last slice over as one call, so its checkpoint still moves', () => {
    expect(piecesOf({ messages: [], lastUid: 42, filtered: [] }, true)).toEqual([{ messages: [], covered: 42, filtered: [] }]);
  });
});
