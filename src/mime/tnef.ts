/**
 * TNEF (`winmail.dat`, application/ms-tnef; MS-OXTNEF) → the message's MAPI properties, its
 * recipients and its attachments, each attachment with its properties and, for an attached
 * e-mail (an embedded message), that message read the same way. Bounded before trust: every
 * length is checked against what is left of the stream, nesting is limited, and a stream that
 * does not hold together is refused (TnefError) rather than read past its end.
 */

const SIGNATURE = 0x223e9f78;
const LVL_MESSAGE = 1;
const LVL_ATTACHMENT = 2;
/** Attribute ids (MS-OXTNEF 2.1.3.2): the full 32-bit value, type in the high word. */
const ATT_BODY = 0x0002800c;
const ATT_MSG_PROPS = 0x00069003;
const ATT_RECIP_TABLE = 0x00069004;
const ATT_ATTACH_REND_DATA = 0x00069002;
const ATT_ATTACH_DATA = 0x0006800f;
const ATT_ATTACH_TITLE = 0x00018010;
const ATT_ATTACHMENT = 0x00069005;
/** Embedded messages nest at most this deep (a message attached to a message attached to …). */
const MAX_DEPTH = 4;
/** Values of one multi-valued property, and properties of one list, at most. */
const MAX_VALUES = 65_536;
/** IID_IMessage {00020307-0000-0000-C000-000000000046}: a PT_OBJECT value that is an embedded message. */
const IID_IMESSAGE = Buffer.from('0703020000000000c000000000000046', 'hex');

export const PT = {
  SHORT: 0x0002,
  LONG: 0x0003,
  BOOLEAN: 0x000b,
  STRING8: 0x001e,
  UNICODE: 0x001f,
  SYSTIME: 0x0040,
  BINARY: 0x0102,
  OBJECT: 0x000d,
};

export type TnefValue = number | boolean | string | Buffer | Date | bigint | TnefMessage | TnefValue[];

/** Properties by id (named properties, 0x8000 and above, are left out: nothing here needs them). */
export type TnefProps = Map<number, TnefValue>;

export interface TnefAttachment {
  props: TnefProps;
  /** attAttachData: the attached file's bytes (absent for an embedded message). */
  data?: Buffer;
  title?: string;
  /** An attached e-mail, read as a message. */
  message?: TnefMessage;
}

export interface TnefMessage {
  props: TnefProps;
  recipients: TnefProps[];
  attachments: TnefAttachment[];
  /** attBody: the plain body in the legacy attribute, when there is one. */
  body?: string;
}

export class TnefError extends Error {}

class Reader {
  constructor(
    readonly buf: Buffer,
    public at = 0,
    readonly end = buf.length,
  ) {}

  need(n: number): void {
    if (n < 0 || this.at + n > this.end) throw new TnefError(`the stream ends before ${n} more bytes at offset ${this.at}`);
  }
  u8(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16LE(this.at);
    this.at += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  pad(n: number): void {
    const rest = (4 - (n % 4)) % 4;
    this.need(rest);
    this.at += rest;
  }
}

const FIXED: Record<number, number> = {
  0x0002: 4,
  0x0003: 4,
  0x0004: 4,
  0x0005: 8,
  0x0006: 8,
  0x0007: 8,
  0x000a: 4,
  0x000b: 4,
  0x0014: 8,
  0x0040: 8,
  0x0048: 16,
};

function fixedValue(type: number, r: Reader): TnefValue {
  const b = r.bytes(FIXED[type]!);
  switch (type) {
    case 0x0002:
      return b.readInt16LE(0);
    case 0x0003:
    case 0x000a:
      return b.readInt32LE(0);
    case 0x000b:
      return b.readUInt32LE(0) !== 0;
    case 0x0004:
      return b.readFloatLE(0);
    case 0x0005:
    case 0x0007:
      return b.readDoubleLE(0);
    case 0x0040: {
      // FILETIME: 100 ns units since 1601-01-01.
      const ms = Number(b.readBigUInt64LE(0) / 10_000n) - 11_644_473_600_000;
      return new Date(ms);
    }
    case 0x0048:
      return Buffer.from(b);
    default:
      return b.readBigInt64LE(0);
  }
}

function variableValue(type: number, r: Reader, depth: number): TnefValue {
  const size = r.u32();
  const data = r.bytes(size);
  r.pad(size);
  if (type === PT.UNICODE) return data.toString('utf16le').replace(/\0+$/, '');
  if (type === PT.STRING8) return data.toString('latin1').replace(/\0+$/, '');
  if (type === PT.OBJECT && data.length >= 16 && data.subarray(0, 16).equals(IID_IMESSAGE)) {
    return readMessage(data.subarray(16), depth + 1);
  }
  return Buffer.from(data);
}

/** A MAPI property list (MS-OXTNEF 2.1.3.4): a count, then each property's tag, name and values. */
function readProps(r: Reader, depth: number): TnefProps {
  const props: TnefProps = new Map();
  const count = r.u32();
  if (count > MAX_VALUES) throw new TnefError(`a property list claims ${count} properties`);
  for (let i = 0; i < count; i++) {
    const type = r.u16();
    const id = r.u16();
    if (id >= 0x8000) {
      r.bytes(16);
      if (r.u32() === 0) r.u32();
      else {
        const len = r.u32();
        r.bytes(len);
        r.pad(len);
      }
    }
    const base = type & 0x0fff;
    const multi = (type & 0x1000) !== 0;
    const variable = base === PT.STRING8 || base === PT.UNICODE || base === PT.BINARY || base === PT.OBJECT;
    if (!variable && FIXED[base] === undefined) throw new TnefError(`unknown property type 0x${type.toString(16)}`);
    let value: TnefValue;
    if (!multi && !variable) value = fixedValue(base, r);
    else {
      const n = r.u32();
      if (n > MAX_VALUES) throw new TnefError(`a property claims ${n} values`);
      const values: TnefValue[] = [];
      for (let k = 0; k < n; k++) values.push(variable ? variableValue(base, r, depth) : fixedValue(base, r));
      value = multi ? values : values[0]!;
    }
    if (id < 0x8000 && value !== undefined) props.set(id, value);
  }
  return props;
}

/** Reads a TNEF stream; throws TnefError when it does not hold together. */
export function readMessage(buf: Buffer, depth = 0): TnefMessage {
  if (depth > MAX_DEPTH) throw new TnefError(`embedded messages nest deeper than ${MAX_DEPTH}`);
  const r = new Reader(buf);
  if (r.u32() !== SIGNATURE) throw new TnefError('no TNEF signature');
  r.u16(); // legacy key
  const message: TnefMessage = { props: new Map(), recipients: [], attachments: [] };
  let current: TnefAttachment | undefined;
  while (r.at < r.end) {
    const level = r.u8();
    const id = r.u32();
    const length = r.u32();
    const data = r.bytes(length);
    r.u16(); // checksum: the data is bounded by its length either way
    if (level === LVL_MESSAGE) {
      if (id === ATT_MSG_PROPS) for (const [k, v] of readProps(new Reader(data), depth)) message.props.set(k, v);
      else if (id === ATT_RECIP_TABLE) {
        const t = new Reader(data);
        const rows = t.u32();
        if (rows > MAX_VALUES) throw new TnefError(`a recipient table claims ${rows} rows`);
        for (let i = 0; i < rows; i++) message.recipients.push(readProps(t, depth));
      } else if (id === ATT_BODY) message.body = data.toString('latin1').replace(/\0+$/, '');
    } else if (level === LVL_ATTACHMENT) {
      if (id === ATT_ATTACH_REND_DATA) message.attachments.push((current = { props: new Map() }));
      if (current === undefined) continue;
      if (id === ATT_ATTACH_DATA) current.data = Buffer.from(data);
      else if (id === ATT_ATTACH_TITLE) current.title = data.toString('latin1').replace(/\0+$/, '');
      else if (id === ATT_ATTACHMENT) {
        const props = readProps(new Reader(data), depth);
        for (const [k, v] of props) current.props.set(k, v);
        const embedded = props.get(0x3701);
        if (embedded !== undefined && typeof embedded === 'object' && 'props' in embedded) current.message = embedded;
      }
    } else throw new TnefError(`unknown attribute level ${level}`);
  }
  return message;
}

export const str = (p: TnefProps, id: number): string | undefined => {
  const v = p.get(id);
  return typeof v === 'string' && v !== '' ? v : undefined;
};
export const bin = (p: TnefProps, id: number): Buffer | undefined => {
  const v = p.get(id);
  return Buffer.isBuffer(v) ? v : undefined;
};
export const num = (p: TnefProps, id: number): number | undefined => {
  const v = p.get(id);
  return typeof v === 'number' ? v : undefined;
};
export const date = (p: TnefProps, id: number): Date | undefined => {
  const v = p.get(id);
  return v instanceof Date && Number.isFinite(v.getTime()) ? v : undefined;
};
