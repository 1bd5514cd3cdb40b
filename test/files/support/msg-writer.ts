/**
 * A minimal Outlook .msg (MS-OXMSG over MS-CFB) writer for tests and samples: string
 * properties as UTF-16 `__substg1.0_XXXX001F` streams, fixed-size ones (time, integer) in
 * `__properties_version1.0`, recipients and attachments as their storages. The compound file
 * itself is produced by msgreader's own CFB burner, so the reader sees a real file.
 */
import burner from '@kenjiuno/msgreader/lib/Burner.js';

const DIRECTORY = 1;
const DOCUMENT = 2;
const ROOT = 5;

export interface MsgRecipient {
  type: 'to' | 'cc' | 'bcc';
  name?: string;
  email: string;
}

export interface MsgAttachment {
  fileName: string;
  mimeType?: string;
  content: Uint8Array;
  contentId?: string;
  /** An attached Outlook item (attach method 5): written as the `__substg1.0_3701000D` storage instead of `content`. */
  message?: MsgSpec;
}

export interface MsgSpec {
  subject?: string;
  senderName?: string;
  senderEmail?: string;
  body?: string;
  bodyHtml?: string;
  /** PidTagRtfCompressed (see rtf-compress.ts). */
  rtfCompressed?: Uint8Array;
  /** PR_TRANSPORT_MESSAGE_HEADERS. */
  transportHeaders?: string;
  messageId?: string;
  submitTime?: Date;
  recipients?: MsgRecipient[];
  attachments?: MsgAttachment[];
}

interface Node {
  name: string;
  type: number;
  data?: Uint8Array;
  children?: Node[];
}

const PT_UNICODE = 0x001f;
const PT_BINARY = 0x0102;
const PT_LONG = 0x0003;
const PT_SYSTIME = 0x0040;

const hex = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');
const utf16 = (s: string) => new Uint8Array(Buffer.from(s + '\0', 'utf16le'));

function stringStream(id: number, value: string): Node {
  return { name: `__substg1.0_${hex(id)}${hex(PT_UNICODE)}`, type: DOCUMENT, data: utf16(value) };
}

function binaryStream(id: number, value: Uint8Array): Node {
  return { name: `__substg1.0_${hex(id)}${hex(PT_BINARY)}`, type: DOCUMENT, data: Uint8Array.from(value) };
}

interface FixedProp {
  id: number;
  type: number;
  value: Buffer;
}

/** `__properties_version1.0`: a header (32 bytes at the top level, 8 elsewhere), then 16-byte entries. */
function propertiesStream(props: FixedProp[], header: Buffer): Node {
  const entries = props.map((p) => {
    const e = Buffer.alloc(16);
    e.writeUInt32LE(((p.id << 16) | p.type) >>> 0, 0);
    e.writeUInt32LE(6, 4);
    p.value.copy(e, 8);
    return e;
  });
  return { name: '__properties_version1.0', type: DOCUMENT, data: new Uint8Array(Buffer.concat([header, ...entries])) };
}

function fileTime(d: Date): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE((BigInt(d.getTime()) + 11644473600000n) * 10000n);
  return b;
}

function long(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32LE(n, 0);
  return b;
}

function recipientNode(r: MsgRecipient, i: number): Node {
  const kind = r.type === 'to' ? 1 : r.type === 'cc' ? 2 : 3;
  const children: Node[] = [stringStream(0x3003, r.email), stringStream(0x3002, 'SMTP'), stringStream(0x39fe, r.email)];
  if (r.name) children.push(stringStream(0x3001, r.name));
  children.push(propertiesStream([{ id: 0x0c15, type: PT_LONG, value: long(kind) }], Buffer.alloc(8)));
  return { name: `__recip_version1.0_#${i.toString(16).toUpperCase().padStart(8, '0')}`, type: DIRECTORY, children };
}

function attachmentNode(a: MsgAttachment, i: number): Node {
  // An embedded message is a storage of its own, laid out as a top-level one but with a 24-byte properties header.
  const content: Node =
    a.message === undefined
      ? binaryStream(0x3701, a.content)
      : { name: `__substg1.0_3701${hex(0x000d)}`, type: DIRECTORY, children: rootChildren(a.message, 24) };
  const children: Node[] = [content, stringStream(0x3707, a.fileName), stringStream(0x3704, a.fileName.slice(0, 12))];
  // Outlook names an attached item by its subject (PidTagDisplayName).
  if (a.message !== undefined) children.push(stringStream(0x3001, a.message.subject ?? a.fileName));
  if (a.mimeType) children.push(stringStream(0x370e, a.mimeType));
  if (a.contentId) children.push(stringStream(0x3712, a.contentId));
  children.push(propertiesStream([{ id: 0x3705, type: PT_LONG, value: long(a.message === undefined ? 1 : 5) }], Buffer.alloc(8)));
  return { name: `__attach_version1.0_#${i.toString(16).toUpperCase().padStart(8, '0')}`, type: DIRECTORY, children };
}

function rootChildren(spec: MsgSpec, headerBytes = 32): Node[] {
  const out: Node[] = [stringStream(0x001a, 'IPM.Note')];
  if (spec.subject !== undefined) out.push(stringStream(0x0037, spec.subject));
  if (spec.senderName) out.push(stringStream(0x0c1a, spec.senderName));
  if (spec.senderEmail)
    out.push(stringStream(0x0c1f, spec.senderEmail), stringStream(0x0c1e, 'SMTP'), stringStream(0x5d01, spec.senderEmail));
  if (spec.body !== undefined) out.push(stringStream(0x1000, spec.body));
  if (spec.bodyHtml !== undefined) out.push(binaryStream(0x1013, new Uint8Array(Buffer.from(spec.bodyHtml, 'utf8'))));
  if (spec.rtfCompressed !== undefined) out.push(binaryStream(0x1009, spec.rtfCompressed));
  if (spec.transportHeaders) out.push(stringStream(0x007d, spec.transportHeaders));
  if (spec.messageId) out.push(stringStream(0x1035, spec.messageId));
  const recips = spec.recipients ?? [];
  const atts = spec.attachments ?? [];
  const header = Buffer.alloc(headerBytes);
  header.writeUInt32LE(recips.length, 8);
  header.writeUInt32LE(atts.length, 12);
  header.writeUInt32LE(recips.length, 16);
  header.writeUInt32LE(atts.length, 20);
  const fixed: FixedProp[] = spec.submitTime ? [{ id: 0x0039, type: PT_SYSTIME, value: fileTime(spec.submitTime) }] : [];
  fixed.push({ id: 0x3fde, type: PT_LONG, value: long(65001) });
  out.push(propertiesStream(fixed, header));
  recips.forEach((r, i) => out.push(recipientNode(r, i)));
  atts.forEach((a, i) => out.push(attachmentNode(a, i)));
  return out;
}

/** Flattens the tree into the burner's entry list (root first, children by index). */
function flatten(root: Node): burner.Entry[] {
  const entries: burner.Entry[] = [];
  const visit = (node: Node): number => {
    const index = entries.length;
    const entry: burner.Entry = { name: node.name, type: node.type, length: node.data?.length ?? 0 };
    entries.push(entry);
    if (node.data) {
      const data = node.data;
      entry.binaryProvider = () => data;
    }
    if (node.children) entry.children = node.children.map(visit);
    return index;
  };
  visit(root);
  return entries;
}

export function writeMsg(spec: MsgSpec): Buffer {
  const root: Node = { name: 'Root Entry', type: ROOT, children: rootChildren(spec) };
  return Buffer.from(burner.burn(flatten(root)));
}
