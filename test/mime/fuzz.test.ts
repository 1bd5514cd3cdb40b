/**
 * A short, fixed-seed run of the fuzzer (`npm run fuzz` runs 100,000+ cases): mutated real
 * mail and generated MIME structures through preview, mutated Outlook files through the .msg
 * reader. Every case ends in a document or a coded error, none in a parser failure.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generatedMessages, loadSeeds, mutate, mutateMsg, runPreview } from '../../bench/support/fuzz-cases.js';
import { msgToRfc822 } from '../../src/mime/msg.js';
import { isGatewayError } from '../../src/errors.js';
import { prng } from '../../src/prng.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SEED = 20261124;

describe('fuzz (fixed seed)', () => {
  it('mutated samples and SpamAssassin mail: a document or a coded error, never a parser failure', () => {
    const seeds = loadSeeds(ROOT, { limit: 400 });
    const rand = prng(SEED);
    const findings: string[] = [];
    for (let i = 0; i < 2500; i++) {
      const seed = seeds[i % seeds.length]!;
      const { bytes, mutator } = mutate(seed, rand, seeds[(i * 7) % seeds.length]!);
      const v = runPreview(bytes, i % 5 === 0 ? 'parsed' : 'raw');
      if (!v.ok && v.finding) findings.push(`case ${i} (${mutator}): ${v.code}: ${v.message.slice(0, 300)}`);
    }
    expect(findings).toEqual([]);
  });

  it('generated MIME structures', () => {
    const findings = generatedMessages(SEED, 500)
      .map((m, i) => [i, runPreview(m, i % 2 === 0 ? 'parsed' : 'raw')] as const)
      .filter(([, v]) => !v.ok && v.finding)
      .map(([i, v]) => `generated ${i}: ${!v.ok ? `${v.code}: ${v.message.slice(0, 300)}` : ''}`);
    expect(findings).toEqual([]);
  });

  it('mutated Outlook .msg files: a message or MAILGATE_ERR_INPUT_MSG_INVALID', () => {
    const files = ['msg/properties.msg', 'msg/transport-headers.msg', 'hostile/directory-chain-loop.msg'].map((f) =>
      readFileSync(join(ROOT, 'samples/files', f)),
    );
    const rand = prng(SEED + 1);
    const findings: string[] = [];
    for (let i = 0; i < 600; i++) {
      try {
        const raw = msgToRfc822(mutateMsg(files[i % files.length]!, rand), `case-${i}.msg`);
        const v = runPreview(raw);
        if (!v.ok && v.finding) findings.push(`msg ${i}: ${v.code}`);
      } catch (err) {
        if (!isGatewayError(err, 'MAILGATE_ERR_INPUT_MSG_INVALID')) findings.push(`msg ${i}: ${(err as Error).stack ?? String(err)}`);
      }
    }
    expect(findings).toEqual([]);
  });
});
