/**
 * The TNEF reader bounds every length by what is left of the stream: a cut stream, a count
 * beyond reason and embedded messages nested without end are refused, never read past the end.
 */
import { describe, expect, it } from 'vitest';
import { readMessage, TnefError } from '../../src/mime/tnef.js';
import { PT, writeTnef, type TnefSpec } from '../support/tnef-writer.js';

const MESSAGE: TnefSpec = {
  props: [{ type: PT.UNICODE, id: 0x0037, value: 'Budget 2025' }],
  attachments: [{ props: [{ type: PT.UNICODE, id: 0x3707, value: 'a.txt' }], data: Buffer.from('hello') }],
};

describe('TNEF reader', () => {
  it('reads the properties and attachments of a stream written as MS-OXTNEF lays it out', () => {
    const m = readMessage(writeTnef(MESSAGE));
    expect(m.props.get(0x0037)).toBe('Budget 2025');
    expect(m.attachments).toHaveLength(1);
    expect(m.attachments[0]!.props.get(0x3707)).toBe('a.txt');
    expect(m.attachments[0]!.data!.toString()).toBe('hello');
  });

  it('refuses a stream cut inside an attribute, at every length, with its own error (never a read past the end)', () => {
    const whole = writeTnef(MESSAGE);
    let refused = 0;
    for (let n = 0; n < whole.length; n++) {
      try {
        readMessage(whole.subarray(0, n));
      } catch (err) {
        expect(err).toBeInstanceOf(TnefError);
        refused++;
      }
    }
    // Only cuts between two attributes leave a stream that holds together (a shorter message).
    expect(refused).toBeGreaterThan(whole.length - 8);
  });

  it('refuses a property list that claims more properties than any message has', () => {
    const bytes = writeTnef(MESSAGE);
    // The first attMsgProps count sits after the signature, key and attTnefVersion (4+2+15) and its own head (9).
    bytes.writeUInt32LE(0x7fffffff, 4 + 2 + 15 + 9);
    expect(() => readMessage(bytes)).toThrow(/claims/);
  });

  it('refuses embedded messages nested deeper than four', () => {
    let spec: TnefSpec = MESSAGE;
    for (let i = 0; i < 6; i++) spec = { props: [], attachments: [{ props: [{ type: PT.OBJECT, id: 0x3701, value: spec }] }] };
    expect(() => readMessage(writeTnef(spec))).toThrow(/nest deeper/);
  });
});
