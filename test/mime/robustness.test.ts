/**
 * Property tests: whatever bytes arrive, parseMessage + buildDocument either return a
 * schema-valid document or throw a GatewayError — never anything else, never a hang
 * and never an internal parser failure (inputs are bounded so the suite stays fast; a hang would hit the test timeout).
 */
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isGatewayError } from '../../src/errors.js';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { RawEmailDocument } from '../../src/model/index.js';

const samplesDir = fileURLToPath(new URL('../../samples/mime/', import.meta.url));
const samples = readdirSync(samplesDir)
  .filter((f) => f.endsWith('.eml'))
  .sort()
  .map((f) => readFileSync(samplesDir + f))
  .filter((b) => b.length < 20_000);

function check(raw: Uint8Array): void {
  try {
    const { document } = buildDocument(parseMessage(raw));
    const r = RawEmailDocument.safeParse(document);
    if (!r.success) throw new Error(`invalid document: ${r.error.message}`);
  } catch (err) {
    // MAILGATE_ERR_MIME_INTERNAL would be a parser bug escaping as a coded error.
    if (!isGatewayError(err) || err.code === 'MAILGATE_ERR_MIME_INTERNAL') throw err;
  }
}

const sample = fc.constantFrom(...samples);
const mutation = fc.record({ at: fc.nat(), len: fc.nat({ max: 64 }), bytes: fc.uint8Array({ maxLength: 64 }) });

function mutate(raw: Buffer, ms: Array<{ at: number; len: number; bytes: Uint8Array }>): Buffer {
  let out = raw;
  for (const m of ms) {
    const at = out.length === 0 ? 0 : m.at % out.length;
    out = Buffer.concat([out.subarray(0, at), m.bytes, out.subarray(Math.min(out.length, at + m.len))]);
  }
  return out;
}

const mimeTokens = fc.constantFrom(
  '\n', '\r\n', '\r', ' ', '\t', ':', ';', '=', '"', '--', '--b', '--b--', 'boundary=b', 'Content-Type: multipart/mixed; boundary=b',
  'Content-Type: text/plain', 'Content-Type: text/html', 'Content-Transfer-Encoding: base64', 'Content-Transfer-Encoding: quoted-printable',
  'Content-Disposition: attachment; filename*0*=utf-8\'\'%E6; filename*1=x', '=?utf-8?B?5pel?=', '=?x?Q?=E9?=', '=', '=3D', '=\n',
  'Subject: s', 'From: "a, b" <c@d>', '<p>', '</blockquote>', '<!--', '&#x1F600;', 'charset=utf-16', 'charset=utf-7', '+AGEA-', 'QUJD',
);

describe('parseMessage + buildDocument never throw anything but GatewayError', () => {
  it('on mutated samples', () => {
    fc.assert(fc.property(sample, fc.array(mutation, { minLength: 1, maxLength: 8 }), (raw, ms) => check(mutate(raw, ms))), { numRuns: 400 });
  });

  it('on truncated samples', () => {
    fc.assert(fc.property(sample, fc.double({ min: 0, max: 1, noNaN: true }), (raw, f) => check(raw.subarray(0, Math.floor(raw.length * f)))), { numRuns: 300 });
  });

  it('on random bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2048 }), (raw) => check(raw)), { numRuns: 300 });
  });

  it('on random sequences of MIME tokens', () => {
    fc.assert(fc.property(fc.array(mimeTokens, { maxLength: 200 }), (tokens) => check(Buffer.from(tokens.join(''), 'utf8'))), { numRuns: 400 });
  });

  it('on deep nesting', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.boolean(), (depth, close) => {
        let raw = 'Content-Type: multipart/mixed; boundary=b0\n\n';
        for (let i = 0; i < depth; i++) raw += `--b${i}\nContent-Type: multipart/related; boundary=b${i + 1}\n\n`;
        raw += `--b${depth}\nContent-Type: text/plain\n\ndeep\n`;
        if (close) for (let i = depth; i >= 0; i--) raw += `--b${i}--\n`;
        check(Buffer.from(raw));
      }),
      { numRuns: 40 },
    );
  });

  it('on huge headers', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 400 }), (fields, width) => {
        const line = `X-Long: ${'v'.repeat(width)}\n`;
        check(Buffer.from(`Subject: s\n${line.repeat(fields)}\nbody`));
      }),
      { numRuns: 20 },
    );
  });

  it('on a header of one huge folded field and a million-character line', () => {
    const folded = `References: ${Array.from({ length: 20_000 }, (_, i) => `<id${i}@x>`).join('\n ')}\nMessage-ID: <${'m'.repeat(5000)}>\n\nb`;
    const { document, warnings } = buildDocument(parseMessage(Buffer.from(folded)));
    expect(warnings.map((w) => w.code)).toContain('MAILGATE_WARN_HEADERS_TRUNCATED');
    expect(RawEmailDocument.safeParse(document).success).toBe(true);
    check(Buffer.from(`Subject: ${'x'.repeat(1_000_000)}\n\n${'y'.repeat(1_000_000)}`));
  });
});
