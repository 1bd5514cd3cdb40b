/**
 * Writes TNEF streams (`winmail.dat`) as MS-OXTNEF lays them out, for tests: the signature and
 * legacy key, then attributes (level, id, length, data, checksum): attTnefVersion, the message's
 * MAPI properties (attMsgProps), its recipient table (attRecipTable), and per attachment
 * attAttachRendData, attAttachData (a file's bytes) and attAttachment (its properties; an
 * attached e-mail as PidTagAttachDataObject: IID_IMessage then the message as a TNEF stream).
 */
export const PT = { LONG: 0x0003, BOOLEAN: 0x000b, STRING8: 0x001e, UNICODE: 0x001f, SYSTIME: 0x0040, BINARY: 0x0102, OBJECT: 0x000d };

export interface Prop {
  type: number;
  id: number;
  value: number | boolean | string | Date | Buffer | TnefSpec;
}

export interface TnefSpec {
  props: Prop[];
  recipients?: Prop[][];
  attachments?: Array<{ props: Prop[]; data?: Buffer }>;
}

const IID_IMESSAGE = Buffer.from('0703020000000000c000000000000046', 'hex');

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const padded = (data: Buffer) => Buffer.concat([u32(1), u32(data.length), data, Buffer.alloc((4 - (data.length % 4)) % 4)]);

function value(p: Prop): Buffer {
  switch (p.type) {
    case PT.LONG:
      return u32(p.value as number);
    case PT.BOOLEAN:
      return u32(p.value ? 1 : 0);
    case PT.SYSTIME: {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE((BigInt((p.value as Date).getTime()) + 11_644_473_600_000n) * 10_000n);
      return b;
    }
    case PT.UNICODE:
      return padded(Buffer.from(`${p.value as string}\0`, 'utf16le'));
    case PT.STRING8:
      return padded(Buffer.from(`${p.value as string}\0`, 'latin1'));
    case PT.BINARY:
      return padded(p.value as Buffer);
    case PT.OBJECT:
      return padded(Buffer.concat([IID_IMESSAGE, writeTnef(p.value as TnefSpec)]));
    default:
      throw new Error(`no writer for property type ${p.type}`);
  }
}

function propList(props: Prop[]): Buffer {
  return Buffer.concat([u32(props.length), ...props.flatMap((p) => [u16(p.type), u16(p.id), value(p)])]);
}

function attribute(level: number, id: number, data: Buffer): Buffer {
  let sum = 0;
  for (const b of data) sum = (sum + b) & 0xffff;
  return Buffer.concat([Buffer.from([level]), u32(id), u32(data.length), data, u16(sum)]);
}

export function writeTnef(spec: TnefSpec): Buffer {
  const parts = [u32(0x223e9f78), u16(0x0001), attribute(1, 0x00089006, u32(0x00010000)), attribute(1, 0x00069003, propList(spec.props))];
  if (spec.recipients) parts.push(attribute(1, 0x00069004, Buffer.concat([u32(spec.recipients.length), ...spec.recipients.map(propList)])));
  for (const a of spec.attachments ?? []) {
    const rend = Buffer.concat([u16(1), u32(0xffffffff), u16(0), u16(0), u32(0)]);
    parts.push(attribute(2, 0x00069002, rend));
    if (a.data) parts.push(attribute(2, 0x0006800f, a.data));
    parts.push(attribute(2, 0x00069005, propList(a.props)));
  }
  return Buffer.concat(parts);
}
