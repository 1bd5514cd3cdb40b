import { describe, expect, it } from 'vitest';
import { GENERATED_PROPERTIES, UserProperties as UserPropertiesSchema } from '../../src/model/index.js';
import { generatedProperties, mergeUserProperties, mergeUserPropertiesReport } from '../../src/preview/properties.js';

const base = {
  from: { name: 'Ann', address: 'Ann.Lee@Example.COM' },
  to: [{ address: 'bob@example.com' }, { name: 'Bob again', address: 'BOB@example.com' }],
  cc: [{ address: 'carl@example.com' }, { name: 'no address' }],
  bcc: [{ address: 'ann.lee@example.com' }],
  messageId: 'abc@example.com',
  threadId: '616263',
  hasSignature: true,
  position: 0,
};

describe('generatedProperties', () => {
  it('generates every property with its value rule', () => {
    expect(generatedProperties(base)).toEqual({
      'string:Has Signature': 'true',
      'string:Sender': 'ann.lee@example.com',
      'string:Thread': '616263',
      'string:Message ID': 'abc@example.com',
      'string:Sender Domain': 'example.com',
      'number:Recipient Count': 3,
      'number:Participant Count': 3,
      'number:Position in Thread': 0,
    });
  });

  it('uses exactly the names the service generates, with their types', () => {
    const keys = Object.keys(generatedProperties(base)).sort();
    const want = Object.entries(GENERATED_PROPERTIES)
      .map(([name, type]) => `${type}:${name}`)
      .sort();
    expect(keys).toEqual(want);
    expect(UserPropertiesSchema.safeParse(generatedProperties(base)).success).toBe(true);
  });

  it('omits absent values rather than sending them empty', () => {
    const p = generatedProperties({ to: [], cc: [], bcc: [], threadId: 'aa', hasSignature: false, position: 2, messageId: '  ' });
    expect(p).toEqual({
      'string:Has Signature': 'false',
      'string:Thread': 'aa',
      'number:Recipient Count': 0,
      'number:Participant Count': 0,
      'number:Position in Thread': 2,
    });
  });

  it('counts each address once however many lists name it, the sender among the participants', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ address: `R${i % 20}@Example.com` }));
    const p = generatedProperties({ ...base, to: many, cc: [{ address: 'r3@example.com' }], bcc: [{ address: ' ann.lee@EXAMPLE.com ' }] });
    expect(p['number:Recipient Count']).toBe(21);
    expect(p['number:Participant Count']).toBe(21);
    const q = generatedProperties({ ...base, to: many, cc: [], bcc: [] });
    expect(q['number:Recipient Count']).toBe(20);
    expect(q['number:Participant Count']).toBe(21);
  });

  it('omits Sender Domain for an address without a domain', () => {
    const p = generatedProperties({ ...base, from: { address: 'postmaster' } });
    expect(p['string:Sender']).toBe('postmaster');
    expect(p['string:Sender Domain']).toBeUndefined();
  });
});

describe('mergeUserProperties', () => {
  const generated = generatedProperties(base);

  it('adds client properties that do not collide', () => {
    const merged = mergeUserProperties(generated, { 'string:Mailbox': 'support' }, { override: [] });
    expect(merged['string:Mailbox']).toBe('support');
    expect(merged['string:Sender']).toBe('ann.lee@example.com');
  });

  it('keeps the generated value when the name is not in override', () => {
    const r = mergeUserPropertiesReport(generated, { 'string:Sender': 'someone@else' }, { override: [] });
    expect(r.properties['string:Sender']).toBe('ann.lee@example.com');
    expect(r.dropped).toEqual(['string:Sender']);
  });

  it('lets the client win for names in override, replacing the generated key whatever its type prefix', () => {
    const r = mergeUserPropertiesReport(generated, { 'number:Sender': 5, 'string:Thread': 'mine' }, { override: ['Sender', 'Thread'] });
    expect(r.properties['number:Sender']).toBe(5);
    expect(r.properties['string:Sender']).toBeUndefined();
    expect(r.properties['string:Thread']).toBe('mine');
    expect(r.overridden).toEqual(['number:Sender', 'string:Thread']);
  });

  it('drops a client value for a generated name even when the generated value is absent', () => {
    const g = generatedProperties({ to: [], cc: [], bcc: [], threadId: 'aa', hasSignature: false, position: 0 });
    const r = mergeUserPropertiesReport(g, { 'string:Sender': 'x@y' }, { override: [] });
    expect(r.properties['string:Sender']).toBeUndefined();
    expect(r.dropped).toEqual(['string:Sender']);
  });
});
