import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { OMITTED_SIZE_HEADER } from '../../adapters/imap/index.js';
import { attachmentMessage, textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { account, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

describe('attachments never cross the wire', () => {
  it('stubs a 3 MB attachment and keeps the transfer small', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [attachmentMessage(1, [{ bytes: 3_000_000, name: 'big.pdf', type: 'application/pdf' }]), textMessage(2)]);
    const sink = new MemorySink();
    const r = run([account(server, user, pass)], sink);
    await eventually(() => sink.accepted.length === 2);
    const health = r.adapter.health()[0]!;
    await r.stop();
    const stub = sink.accepted[0]!.raw.toString('latin1');
    console.log(stub, health);
    expect(stub).toContain(`${OMITTED_SIZE_HEADER}: 3000000`);
    expect(health.bytesReceived).toBeLessThan(100_000);
  });
});
