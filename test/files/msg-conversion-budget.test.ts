/**
 * .msg conversion ran on the reading thread, outside any time or heap budget: whatever the
 * structure check does not catch could still stop the process. The compiled reader converts in
 * a worker with a heap limit and a time budget; over budget, the file is a coded failure.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { requireBuild, ROOT, SAMPLES } from '../cli/support/dist.js';

async function convertMsg(): Promise<typeof import('../../src/mime/msg-convert.js').convertMsg> {
  requireBuild();
  const mod = (await import(
    pathToFileURL(join(ROOT, 'dist/src/mime/msg-convert.js')).href
  )) as typeof import('../../src/mime/msg-convert.js');
  return mod.convertMsg;
}

describe('.msg conversion in a budgeted worker', () => {
  // First in this file: the worker is not started yet, and starting one takes far longer than
  // the 1 ms budget (a warm worker may answer a small file within it).
  it('over its time budget the file is MAILGATE_ERR_INPUT_MSG_INVALID, and the next file converts', async () => {
    const convert = await convertMsg();
    const bytes = readFileSync(join(SAMPLES, 'msg/properties.msg'));
    await expect(convert(bytes, 'slow.msg', { timeoutMs: 1 })).rejects.toMatchObject({
      code: 'MAILGATE_ERR_INPUT_MSG_INVALID',
      message: expect.stringMatching(/1 ms budget/),
    });
    await expect(convert(bytes, 'next.msg')).resolves.toBeInstanceOf(Buffer);
  });

  it('converts in the worker, one file after another', async () => {
    const convert = await convertMsg();
    const files = ['msg/properties.msg', 'msg/transport-headers.msg'].map((f) => readFileSync(join(SAMPLES, f)));
    const out = await Promise.all(files.map((b, i) => convert(b, `f${i}.msg`)));
    for (const raw of out) expect(raw.toString('utf8')).toMatch(/^[\s\S]*MIME-Version: 1\.0/);
  });

  it("a corrupt file is refused with the structure check's reason", async () => {
    const convert = await convertMsg();
    const loop = readFileSync(join(SAMPLES, 'hostile/directory-chain-loop.msg'));
    await expect(convert(loop, 'loop.msg')).rejects.toMatchObject({
      code: 'MAILGATE_ERR_INPUT_MSG_INVALID',
      message: expect.stringMatching(/loops/),
    });
  });
});
