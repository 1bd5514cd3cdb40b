/**
 * Writes PidTagRtfCompressed values (MS-OXRTFCP) for test files: LZFu with literal runs only
 * (a valid stream: every run is a control byte and up to eight literals) and the end marker, a
 * reference to the dictionary's write position; the CRC over the compressed bytes as the spec
 * defines it.
 */
const DICTIONARY_LENGTH = 207;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc(bytes: Uint8Array): number {
  let c = 0;
  for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)) >>> 0;
  return c;
}

export function compressRtf(rtf: string): Buffer {
  const raw = Buffer.from(rtf, 'latin1');
  const out: number[] = [];
  let pos = 0;
  for (;;) {
    const literals = raw.subarray(pos, pos + 8);
    pos += literals.length;
    if (literals.length === 8) {
      out.push(0, ...literals);
      continue;
    }
    // The last run: what is left as literals, then the end marker (its control bit set).
    const end = (DICTIONARY_LENGTH + raw.length) % 4096;
    out.push(1 << literals.length, ...literals, (end >> 4) & 0xff, (end << 4) & 0xf0);
    break;
  }
  const body = Buffer.from(out);
  const header = Buffer.alloc(16);
  header.writeUInt32LE(body.length + 12, 0);
  header.writeUInt32LE(raw.length, 4);
  header.writeUInt32LE(0x75465a4c, 8);
  header.writeUInt32LE(crc(body), 12);
  return Buffer.concat([header, body]);
}
