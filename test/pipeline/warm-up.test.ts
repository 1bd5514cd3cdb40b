import { describe, expect, it } from 'vitest';
import { WARM_UP_MESSAGES, warmUpMessage } from '../../src/pipeline/warm-up.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { previewSync } from '../../src/preview/index.js';

describe('parse worker warm-up samples', () => {
  it('every sample a worker warms up on parses cleanly, so the warm-up runs the paths real mail takes and not error paths', () => {
    for (let i = 0; i < WARM_UP_MESSAGES; i++) {
      const result = previewSync(warmUpMessage(i));
      expect(result.warnings, `sample ${i}`).toEqual([]);
      expect(result.comment.messages[0]?.body.text, `sample ${i}`).toBeTruthy();
      expect(() => encodePreview(result)).not.toThrow();
    }
  });

  it('covers attachments in full and as stub parts, quoted-printable in another charset, HTML and encoded words', () => {
    const samples = Array.from({ length: 12 }, (_, i) => previewSync(warmUpMessage(i)));
    const sizes = samples.flatMap((s) => (s.document.raw_email.attachments ?? []).map((a) => a.size));
    expect(sizes).toContain(100_001); // a stub part: the size its marker declares
    expect(sizes.some((n) => n > 0 && n < 1_000)).toBe(true); // an attachment in full
    const text = (s: (typeof samples)[number]) => ('plain' in s.document.raw_email.body ? s.document.raw_email.body.plain : '');
    expect(samples.some((s) => text(s).includes('équipe support'))).toBe(true); // iso-8859-1 quoted-printable
    // HTML alone: its text, entities decoded, makes the comment
    expect(
      samples.some((s) => 'html' in s.document.raw_email.body && s.comment.messages[0]?.signature?.text.includes('Thanks & regards')),
    ).toBe(true);
    expect(samples.some((s) => s.comment.messages[0]?.subject?.text === 'Facture n° 1')).toBe(true); // an encoded word
    expect(samples.filter((s) => s.comment.messages[0]?.signature !== undefined).length).toBeGreaterThan(0);
    expect(new Set(samples.map((s) => s.comment.id)).size).toBe(samples.length);
  });
});
