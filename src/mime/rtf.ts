/**
 * Outlook RTF bodies (PidTagRtfCompressed) → text: the compressed RTF is decompressed (LZFu,
 * MS-OXRTFCP), then HTML or plain text encapsulated in it is taken out as it was (MS-OXRTFEX);
 * an RTF that encapsulates nothing (written in Outlook's RTF editor) is reduced to plain text.
 * A message whose body exists only as RTF is thus no longer empty.
 */
import { decompressRTF } from '@kenjiuno/decompressrtf';
import iconv from 'iconv-lite';
import { Tokenize, deEncapsulateSync } from 'rtf-stream-parser';
import { ToPlainText } from 'rtf-stream-parser/dist/src/ToPlainText.js';

const COMPRESSED = 0x75465a4c; // 'LZFu'
const UNCOMPRESSED = 0x414c454d; // 'MELA'
/** LZFu writes at most 17 bytes out of every 2 (16 bytes of one run + control byte); anything more is a lie. */
const MAX_RATIO = 9;

export interface RtfBody {
  type: 'html' | 'plain';
  text: string;
}

/**
 * The RTF held by a PidTagRtfCompressed value, or undefined when the header does not describe
 * the bytes that follow (a size beyond the data, an unknown compression): a corrupt value is
 * no body, never an unbounded allocation.
 */
export function decompressRtf(data: Uint8Array): Buffer | undefined {
  if (data.length < 16) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const compSize = view.getUint32(0, true);
  const rawSize = view.getUint32(4, true);
  const type = view.getUint32(8, true);
  if (compSize + 4 > data.length || compSize < 12) return undefined;
  if (type === UNCOMPRESSED) return Buffer.from(data.subarray(16, Math.min(data.length, 16 + rawSize)));
  if (type !== COMPRESSED || rawSize > data.length * MAX_RATIO) return undefined;
  try {
    return Buffer.from(decompressRTF(Array.from(data.subarray(0, compSize + 4))));
  } catch {
    return undefined;
  }
}

const decode = (buf: Buffer, enc: string): string => iconv.decode(buf, iconv.encodingExists(enc) ? enc : 'latin1');
const fail = (err: Error | null | undefined): void => {
  if (err) throw err;
};

/** Text of an RTF document that encapsulates nothing: paragraphs as CRLF, escapes decoded. */
function plainText(rtf: Buffer): string {
  const tokens = new Tokenize();
  const text = new ToPlainText({ decode, warn: () => undefined });
  const out: string[] = [];
  tokens.push = (token: unknown) => {
    text._transform(token as never, '', fail);
    return true;
  };
  text.push = (piece: unknown) => {
    out.push(String(piece));
    return true;
  };
  tokens._transform(rtf, 'binary', fail);
  tokens._flush(() => undefined);
  text._flush(fail);
  return out.join('');
}

/** The body an RTF document stands for: its encapsulated HTML or text, else its text. Undefined when it is not RTF. */
export function rtfToBody(rtf: Buffer): RtfBody | undefined {
  try {
    const r = deEncapsulateSync(rtf, { decode, mode: 'either', warn: () => undefined });
    return { type: r.mode === 'html' ? 'html' : 'plain', text: String(r.text) };
  } catch {
    // Not encapsulated: an RTF authored in Outlook's own editor.
  }
  try {
    return { type: 'plain', text: plainText(rtf) };
  } catch {
    return undefined;
  }
}

/** Compressed RTF straight to a body (see decompressRtf and rtfToBody). */
export function compressedRtfBody(data: Uint8Array): RtfBody | undefined {
  const rtf = decompressRtf(data);
  return rtf === undefined ? undefined : rtfToBody(rtf);
}
