/**
 * Property tests: whatever bytes arrive, preview() (parseMessage, buildDocument, then the
 * comment: quotes, signature, generated properties) either returns a schema-valid document
 * and comment or throws a GatewayError — never anything else, never a hang and never an
 * internal parser failure (inputs are bounded so the suite stays fast; a hang would hit the
 * test timeout). Each run also varies the body and header options.
 */
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isGatewayError } from '../../src/errors.js';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { Comment, RawEmailDocument } from '../../src/model/index.js';
import { buildComment, preview, previewSync, type PreviewOptions } from '../../src/preview/index.js';

const samplesDir = fileURLToPath(new URL('../../samples/mime/', import.meta.url));
const samples = readdirSync(samplesDir)
  .filter((f) => f.endsWith('.eml'))
  .sort()
  .map((f) => readFileSync(samplesDir + f))
  .filter((b) => b.length < 20_000);

const receivedAt = new Date('2024-01-01T00:00:00Z');
const optionSets: PreviewOptions[] = [{ receivedAt }, { receivedAt, headers: 'parsed', body: 'plain' }, { receivedAt, body: 'html' }];
const options = fc.constantFrom(...optionSets);

function check(raw: Uint8Array, opts: PreviewOptions = optionSets[0]!): void {
  try {
    const { document, comment } = previewSync(raw, opts);
    const d = RawEmailDocument.safeParse(document);
    if (!d.success) throw new Error(`invalid document: ${d.error.message}`);
    const c = Comment.safeParse(comment);
    if (!c.success) throw new Error(`invalid comment: ${c.error.message}`);
    if (comment.id !== document.comment_id) throw new Error("comment id differs from the document's");
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

/** Lines the quote and signature rules look for. */
const REPLY_LINES = [
  'On Mon, Jan 1, 2024 at 9:00 AM Bob <bob@example.com> wrote:',
  'Am 01.01.2024 um 09:00 schrieb Bob:',
  '> quoted',
  '>> deeper',
  'EL> cite',
  '-----Original Message-----',
  '________________________________',
  '---',
  '-- ',
  '--',
  'From: Bob <bob@example.com>',
  'Sent: Monday, January 1, 2024 9:00 AM',
  'To: Anna',
  'Subject: x',
  '*From:* bob@example.com',
  'De : Bob',
  'Envoyé : lundi 1 janvier 2024 09:00',
  '---------- Forwarded message ---------',
  'Begin forwarded message:',
  'Thanks,',
  'Kind regards,',
  'Mit freundlichen Grüßen',
  'Anna',
  '- Anna',
  'Sent from my iPhone',
  'Get Outlook for iOS',
  '',
  'Hello, the report is attached.',
  'On Monday we ship 3 pallets.',
  'From: the warehouse',
  'Date: tomorrow',
];

const mimeTokens = fc.constantFrom(
  '\n',
  '\r\n',
  '\r',
  ' ',
  '\t',
  ':',
  ';',
  '=',
  '"',
  '--',
  '--b',
  '--b--',
  'boundary=b',
  'Content-Type: multipart/mixed; boundary=b',
  'Content-Type: text/plain',
  'Content-Type: text/html',
  'Content-Transfer-Encoding: base64',
  'Content-Transfer-Encoding: quoted-printable',
  "Content-Disposition: attachment; filename*0*=utf-8''%E6; filename*1=x",
  '=?utf-8?B?5pel?=',
  '=?x?Q?=E9?=',
  '=',
  '=3D',
  '=\n',
  'Subject: s',
  'From: "a, b" <c@d>',
  '<p>',
  '</blockquote>',
  '<!--',
  '&#x1F600;',
  'charset=utf-16',
  'charset=utf-7',
  '+AGEA-',
  'QUJD',
  'Message-ID: <m@x>',
  'In-Reply-To: <r@x>',
  'Date: Mon, 1 Jan 2024 09:00:00 +0000',
  'Thread-Index: AQHZ',
  'Received: x; Tue, 2 Jan 2024 10:00:00 +0000',
  ...REPLY_LINES,
);

describe('preview (parse, document, comment) never throws anything but GatewayError', () => {
  it('on mutated samples', () => {
    fc.assert(
      fc.property(sample, fc.array(mutation, { minLength: 1, maxLength: 8 }), options, (raw, ms, o) => check(mutate(raw, ms), o)),
      { numRuns: 400 },
    );
  });

  it('on truncated samples', () => {
    fc.assert(
      fc.property(sample, fc.double({ min: 0, max: 1, noNaN: true }), options, (raw, f, o) =>
        check(raw.subarray(0, Math.floor(raw.length * f)), o),
      ),
      { numRuns: 300 },
    );
  });

  it('on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), (raw) => check(raw)),
      { numRuns: 300 },
    );
  });

  it('on random sequences of MIME tokens', () => {
    fc.assert(
      fc.property(fc.array(mimeTokens, { maxLength: 200 }), options, (tokens, o) => check(Buffer.from(tokens.join(''), 'utf8'), o)),
      { numRuns: 400 },
    );
  });

  it('on replies made of quote, splitter and signature lines, as text or HTML', () => {
    const head = 'From: Anna <anna@example.com>\nTo: bob@example.com\nSubject: Re: x\nMessage-ID: <a@x>\n';
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...REPLY_LINES), { maxLength: 120 }), fc.boolean(), options, (lines, html, o) => {
        const body = html ? `<div>${lines.map((l) => l.replace(/</g, '&lt;')).join('<br>')}<hr></div>` : lines.join('\n');
        check(Buffer.from(`${head}Content-Type: text/${html ? 'html' : 'plain'}; charset=utf-8\n\n${body}`, 'utf8'), o);
      }),
      { numRuns: 300 },
    );
  });

  it("preview() resolves to what the stages build, or rejects with the parser's coded error, on mutated samples", async () => {
    await fc.assert(
      fc.asyncProperty(sample, fc.array(mutation, { minLength: 1, maxLength: 4 }), options, async (raw, ms, o) => {
        const input = mutate(raw, ms);
        const got = await preview(input, o).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
        let parsed: ReturnType<typeof parseMessage>;
        try {
          parsed = parseMessage(input);
        } catch (err) {
          // The parser is the one stage that refuses input: preview() rejects with its code.
          if (!isGatewayError(err) || err.code === 'MAILGATE_ERR_MIME_INTERNAL') throw err;
          expect('error' in got && isGatewayError(got.error) ? got.error.code : got).toBe(err.code);
          return;
        }
        if ('error' in got) throw got.error;
        // Checked against the stages themselves, not against previewSync (which preview() calls).
        const built = buildDocument(parsed, o);
        expect(got.result.document).toEqual(built.document);
        expect(got.result.comment).toEqual(buildComment(built.document, o).comment);
        expect(got.result.warnings.slice(0, built.warnings.length)).toEqual(built.warnings);
        expect(got.result).toEqual(previewSync(input, o));
      }),
      { numRuns: 100 },
    );
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
