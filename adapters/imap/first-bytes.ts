/**
 * The FETCH every message goes through (fetcher.ts planChunk: UID, RFC822.SIZE, INTERNALDATE
 * and the first bytes of the source, MODSEQ added by imapflow under CONDSTORE), and the one of
 * the last bytes of a stubbed message (fetchFromEnds), read on a narrower path than imapflow's. imapflow reads every response generically: a token parser, a
 * second walk that compiles the response back to text for its log (even with logging off), and
 * one more compile per attribute to name it. For these answers — a flat list of known items and
 * one literal — that was most of the client's CPU per message.
 *
 * While such a FETCH runs, an untagged response of exactly that shape is read here, from the
 * line and the literal imapflow's stream has already split; anything else (another shape, an
 * unsolicited FETCH with FLAGS, the tagged completion) goes through imapflow as before, so the
 * command itself, its lock, its throttle retries and its errors stay imapflow's. The caller runs
 * no other FETCH on the connection meanwhile (fetcher.ts issues one command at a time, each
 * completed before the next). The hook wraps `handleResponse`, an internal method of imapflow
 * 2.x; without it this is a plain `fetchAll`.
 *
 * Such a response is read as imapflow's stream hands it over (its `push`), when nothing is
 * waiting before it (no response buffered, none being handled): it then skips the stream's
 * object queue and imapflow's reader loop (two ticks and a promise chain per response) and is
 * released at once, as the reader would release it. Otherwise it takes the queue as before.
 */
import type { FetchQueryObject, ImapFlow, MessageStructureObject } from 'imapflow';
import { readStructure } from './structure-wire.js';

/** What the FETCH answers for one message (the fields fetchAll would give). */
export interface FirstBytes {
  uid: number;
  size?: number;
  internalDate?: Date | string;
  source?: Buffer;
}

/** An item of imapflow's response stream: the response line(s) with `{n}` markers, and the literals. */
interface StreamItem {
  payload: Buffer;
  literals: Buffer[];
}

/** imapflow's response stream (a Transform in object mode on its readable side). */
interface Streamer {
  push(item: StreamItem | null): boolean;
  readableLength: number;
  destroyed: boolean;
}

interface Internals {
  handleResponse?: (data: StreamItem) => Promise<boolean>;
  currentRequest?: { command?: string } | false;
  mailbox: ImapFlow['mailbox'];
  streamer?: Streamer;
  /** True while imapflow's reader handles a response. */
  _processingResponse?: boolean;
  /** Tells the stream a response was handled: it reads on. */
  releaseStreamData?: (data: StreamItem) => void;
}

interface Hook {
  /**
   * While a FETCH of ours runs: reads one untagged response of the shape that FETCH answers
   * (false: any other shape, left to imapflow).
   */
  reader: ((payload: Buffer, literals: Buffer[], client: Internals) => boolean) | undefined;
  /** Responses read here so far (tests look at it). */
  read: number;
  /** Of those, read as the stream handed them over (not through its queue). */
  direct: number;
}

const hooks = new WeakMap<ImapFlow, Hook>();

const CLOSE = 0x29;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Reads one FETCH answer from its bytes (latin1: one byte a character) without a string of the
 * whole line or a match object per item: this runs once for every message of every sync.
 */
class Cursor {
  pos: number;
  constructor(
    readonly b: Buffer,
    readonly end: number,
    at = 0,
  ) {
    this.pos = at;
  }

  /** Consumes `text` when it stands at the cursor. */
  eat(text: string): boolean {
    const { b, pos } = this;
    if (pos + text.length > this.end) return false;
    for (let i = 0; i < text.length; i++) if (b[pos + i] !== text.charCodeAt(i)) return false;
    this.pos = pos + text.length;
    return true;
  }

  /** Consumes a run of 1 to `max` ASCII digits (the whole run: a longer one fails); its end, or -1. */
  digits(max: number): number {
    const { b, end } = this;
    let i = this.pos;
    while (i < end && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
    const n = i - this.pos;
    if (n === 0 || n > max) return -1;
    this.pos = i;
    return i;
  }

  /** The number of the digits from `from` to `to` (at most 10: exact in a double). */
  value(from: number, to: number): number {
    let v = 0;
    for (let i = from; i < to; i++) v = v * 10 + (this.b[i]! - 0x30);
    return v;
  }
}

/**
 * The answer of one message to a FETCH of the source from `start`, or undefined when the
 * response has any other shape. The shape, as a regular expression over the line:
 * `^\* \d{1,10} FETCH \((.*)\)$`, the list made of single-space separated items
 * `(UID|RFC822\.SIZE) \d{1,10}`, `INTERNALDATE "[^"\\\r\n]*"`, `MODSEQ \(\d{1,20}\)` and
 * `BODY\[\]<\d{1,10}> \{\d{1,10}\}\r\n` (a literal's line break ends its item: no space after it).
 */
export function readFirstBytes(payload: Buffer, literals: Buffer[], start = 0): (FirstBytes & { modseq?: bigint }) | undefined {
  if (payload.length > 512 || literals.length !== 1) return undefined;
  const last = payload.length - 1;
  if (last < 0 || payload[last] !== CLOSE) return undefined;
  const c = new Cursor(payload, last);
  if (!c.eat('* ') || c.digits(10) === -1 || !c.eat(' FETCH (')) return undefined;
  const out: Partial<FirstBytes> & { modseq?: bigint } = {};
  while (c.pos < last) {
    let literal = false;
    const from = c.pos;
    if (c.eat('UID ') || c.eat('RFC822.SIZE ')) {
      const uid = payload[from] === 0x55; // 'U'
      const at = c.pos;
      const to = c.digits(10);
      if (to === -1) return undefined;
      if (uid) out.uid = c.value(at, to);
      else out.size = c.value(at, to);
    } else if (c.eat('INTERNALDATE "')) {
      const at = c.pos;
      let i = at;
      while (i < last && payload[i] !== QUOTE && payload[i] !== BACKSLASH && payload[i] !== CR && payload[i] !== LF) i++;
      if (i >= last || payload[i] !== QUOTE) return undefined;
      out.internalDate = internalDate(payload.toString('latin1', at, i));
      c.pos = i + 1;
    } else if (c.eat('MODSEQ (')) {
      const at = c.pos;
      const to = c.digits(20);
      if (to === -1 || !c.eat(')')) return undefined;
      out.modseq = BigInt(payload.toString('latin1', at, to));
    } else if (c.eat('BODY[]<')) {
      const at = c.pos;
      const offsetEnd = c.digits(10);
      if (offsetEnd === -1 || !c.eat('> {')) return undefined;
      const sizeAt = c.pos;
      const sizeEnd = c.digits(10);
      if (sizeEnd === -1 || !c.eat('}\r\n')) return undefined;
      const literal0 = literals[0]!;
      if (out.source !== undefined || c.value(at, offsetEnd) !== start || literal0.length !== c.value(sizeAt, sizeEnd)) return undefined;
      out.source = literal0;
      literal = true;
    } else {
      return undefined;
    }
    // Items are separated by one space; a literal's line break already ends its item.
    if (c.pos < last && !literal && !c.eat(' ')) return undefined;
  }
  if (out.uid === undefined || out.uid < 1 || out.source === undefined) return undefined;
  return out as FirstBytes & { modseq?: bigint };
}

/** As imapflow reads it: a Date, or the text when it is not a date. */
function internalDate(text: string): Date | string {
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? text : d;
}

/** Keeps imapflow's estimates of UIDNEXT and HIGHESTMODSEQ as its own reading would. */
function bump(client: Internals, m: { uid: number; modseq?: bigint }): void {
  const box = client.mailbox;
  if (box === false) return;
  if (!box.uidNext || box.uidNext <= m.uid) box.uidNext = m.uid + 1;
  if (m.modseq !== undefined && (!box.highestModseq || box.highestModseq < m.modseq)) box.highestModseq = m.modseq;
}

function hookOf(client: ImapFlow): Hook | undefined {
  const known = hooks.get(client);
  if (known !== undefined) return known;
  const internals = client as unknown as Internals;
  const generic = internals.handleResponse;
  if (typeof generic !== 'function') return undefined;
  const hook: Hook = { reader: undefined, read: 0, direct: 0 };
  const ours = (data: StreamItem): boolean => {
    const request = internals.currentRequest;
    return hook.reader !== undefined && !!request && request.command === 'UID FETCH' && hook.reader(data.payload, data.literals, internals);
  };
  internals.handleResponse = function (this: Internals, data: StreamItem): Promise<boolean> {
    if (ours(data)) {
      hook.read++;
      return Promise.resolve(true);
    }
    return generic.call(this, data);
  };
  directPath(internals, hook, ours);
  hooks.set(client, hook);
  return hook;
}

/**
 * Reads our responses as the stream pushes them, when nothing waits before them: the stream
 * hands over one response and waits for its release before the next, so with its queue empty
 * and the reader idle this one is next in line.
 */
function directPath(internals: Internals, hook: Hook, ours: (data: StreamItem) => boolean): void {
  const streamer = internals.streamer;
  const release = internals.releaseStreamData;
  if (streamer === undefined || typeof streamer.push !== 'function' || typeof release !== 'function') return;
  const push = streamer.push;
  streamer.push = function (this: Streamer, item: StreamItem | null): boolean {
    const next = item !== null && hook.reader !== undefined && this.readableLength === 0 && !this.destroyed;
    if (next && internals._processingResponse !== true && ours(item)) {
      hook.read++;
      hook.direct++;
      release.call(internals, item);
      return true;
    }
    return push.call(this, item);
  };
}

/** How many responses of `client` were read on the narrow path so far. */
export function firstBytesRead(client: ImapFlow): number {
  return hooks.get(client)?.read ?? 0;
}

/** Of those, how many as the stream handed them over (past its queue and imapflow's reader). */
export function firstBytesDirect(client: ImapFlow): number {
  return hooks.get(client)?.direct ?? 0;
}

/** `UID FETCH range (UID RFC822.SIZE INTERNALDATE BODY.PEEK[]<0.maxLength>)`, one answer per UID. */
export function fetchFirstBytes(client: ImapFlow, range: string, maxLength: number): Promise<FirstBytes[]> {
  const query = { uid: true, size: true, internalDate: true, source: { start: 0, maxLength } } as const;
  return narrowFetch<FirstBytes>(client, range, query, (payload, literals) => readFirstBytes(payload, literals, 0));
}

/** `UID FETCH range (UID BODY.PEEK[]<start.maxLength>)`, one answer per UID. */
export function fetchSourceRange(client: ImapFlow, range: string, start: number, maxLength: number): Promise<FirstBytes[]> {
  return narrowFetch<FirstBytes>(client, range, { uid: true, source: { start, maxLength } }, (payload, literals) =>
    readFirstBytes(payload, literals, start),
  );
}

/** `UID FETCH range (UID BODYSTRUCTURE)`, one answer per UID (structure-wire.ts reads it). */
export function fetchBodyStructures(
  client: ImapFlow,
  range: string,
): Promise<Array<{ uid: number; bodyStructure?: MessageStructureObject }>> {
  return narrowFetch<{ uid: number; bodyStructure?: MessageStructureObject }>(
    client,
    range,
    { uid: true, bodyStructure: true },
    readStructure,
  );
}

/**
 * `fetchAll(range, query)` with the answers of the expected shape read by `read` (the rest by
 * imapflow, whose answers for the same UIDs are then dropped).
 */
async function narrowFetch<T extends { uid: number }>(
  client: ImapFlow,
  range: string,
  query: FetchQueryObject,
  read: (payload: Buffer, literals: Buffer[]) => (T & { modseq?: bigint }) | undefined,
): Promise<T[]> {
  const hook = hookOf(client);
  if (hook === undefined) return (await client.fetchAll(range, query, { uid: true })) as unknown as T[];
  // A throttled FETCH is sent again by imapflow: the last answer for a UID is kept.
  const narrow = new Map<number, T>();
  hook.reader = (payload, literals, internals) => {
    const m = read(payload, literals);
    if (m === undefined) return false;
    bump(internals, m);
    const { modseq: _modseq, ...message } = m;
    narrow.set(m.uid, message as unknown as T);
    return true;
  };
  let generic;
  try {
    generic = await client.fetchAll(range, query, { uid: true });
  } finally {
    hook.reader = undefined;
  }
  return [...narrow.values(), ...(generic as unknown as T[]).filter((m) => !narrow.has(m.uid))];
}
