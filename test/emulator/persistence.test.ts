import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { client, mail, setup, SYNC, TAG } from './helpers.js';

let dir: string;
const running: Emulator[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-emulator-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
  fs.rmSync(dir, { recursive: true, force: true });
});

function emulator(): Emulator {
  const e = createEmulator({ token: 't', dataDir: dir, logger: false });
  running.push(e);
  return e;
}

describe('persistence with dataDir', () => {
  it('state survives a restart on the same port', async () => {
    const first = emulator();
    const url = await first.listen(0);
    const api = client(url, 't');
    await setup(api, { dataset: true });
    const a1 = mail({ commentId: 'a1' });
    await api.post(SYNC, { documents: [a1, mail({ commentId: 'a2' })], transform_tag: TAG });
    await api.post('/api/v1/datasets/acme/triage/labellers/live/predict-raw-emails', { documents: [mail()], transform_tag: TAG });
    await first.close();

    const second = emulator();
    const port = Number(new URL(url).port);
    expect(await second.listen(port)).toBe(url);
    expect(second.stats()).toMatchObject({ comments: 2, ai_units: 3 });
    // A kept-alive connection to the old process may fail once, as it would for any client after a restart.
    await api.get('/api/v1/sources').catch(() => undefined);
    expect(second.stats().requests['sync-raw-emails']).toEqual({ '200': 1 });
    expect((await api.get('/api/v1/sources/acme/inbox/comments/a1')).status).toBe(200);
    expect((await api.get('/api/v1/datasets/acme/triage')).status).toBe(200);
    const again = await api.post(SYNC, { documents: [a1], transform_tag: TAG });
    expect(again.json.unchanged).toBe(1);
  });

  it('a write is durable before it is answered (drop_after_apply, then the process dies)', async () => {
    const first = emulator();
    const url = await first.listen(0);
    const api = client(url, 't');
    await setup(api);
    first.setFaults([{ endpoint: 'sync-raw-emails', drop_after_apply: true, times: 1 }]);
    await expect(api.post(SYNC, { documents: [mail({ commentId: 'b1' })], transform_tag: TAG })).rejects.toThrow();
    // Simulate a crash: read the directory without a clean close of the first emulator.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-emulator-copy-'));
    try {
      fs.cpSync(dir, copy, { recursive: true });
      const revived = createEmulator({ token: 't', dataDir: copy });
      running.push(revived);
      expect(revived.stats()).toMatchObject({ comments: 1, ai_units: 1 });
    } finally {
      await running.pop()!.close();
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('a torn last log line is ignored', async () => {
    const first = emulator();
    const url = await first.listen(0);
    const api = client(url, 't');
    await setup(api);
    await api.post(SYNC, { documents: [mail({ commentId: 'c1' })], transform_tag: TAG });
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-emulator-copy-'));
    try {
      fs.cpSync(dir, copy, { recursive: true });
      fs.appendFileSync(path.join(copy, 'log.jsonl'), '{"op":"comments","source_id":"x","comm');
      const revived = createEmulator({ token: 't', dataDir: copy });
      expect(revived.stats()).toMatchObject({ comments: 1, ai_units: 1 });
      await revived.close();
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });

  it('a corrupt snapshot is a coded error', () => {
    fs.writeFileSync(path.join(dir, 'state.json'), '{not json');
    let caught: unknown;
    try {
      createEmulator({ token: 't', dataDir: dir });
    } catch (err) {
      caught = err;
    }
    expect(isGatewayError(caught, 'MAILGATE_ERR_EMULATOR_STATE_CORRUPT')).toBe(true);
  });

  it('reset is persisted too', async () => {
    const first = emulator();
    const url = await first.listen(0);
    const api = client(url, 't');
    await setup(api);
    await api.post(SYNC, { documents: [mail()], transform_tag: TAG });
    first.reset();
    await first.close();
    const second = emulator();
    expect(second.stats()).toEqual({ requests: {}, ai_units: 0, comments: 0 });
  });

  it('without dataDir, close and listen again keeps the memory state', async () => {
    const e = createEmulator({ token: 't' });
    running.push(e);
    const api = client(await e.listen(0), 't');
    await setup(api);
    await e.close();
    const api2 = client(await e.listen(0), 't');
    expect((await api2.get('/api/v1/sources/acme/inbox')).status).toBe(200);
  });
});
