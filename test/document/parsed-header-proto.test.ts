/**
 * Bug: with `headers: parsed`, a header literally named `__proto__` was dropped (assigning it
 * on a plain object sets the prototype instead). Parsed headers are a null-prototype object;
 * `__proto__`, `constructor` and `hasOwnProperty` are headers like any other.
 */
import { describe, expect, it } from 'vitest';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { RawEmailDocument } from '../../src/model/index.js';

const RAW =
  'From: a@example.com\r\n__proto__: polluted\r\nconstructor: built\r\nhasOwnProperty: own\r\ntoString: str\r\nSubject: hi\r\n\r\nbody\r\n';

describe('parsed headers named like Object.prototype members', () => {
  it('keeps __proto__, constructor and hasOwnProperty as own fields, in JSON too', () => {
    const { document } = buildDocument(parseMessage(Buffer.from(RAW)), { headers: 'parsed' });
    const headers = document.raw_email.headers as { parsed: Record<string, string> };
    expect(Object.keys(headers.parsed)).toEqual(['From', '__proto__', 'constructor', 'hasOwnProperty', 'toString', 'Subject']);
    const json = JSON.parse(JSON.stringify(document)) as { raw_email: { headers: { parsed: Record<string, string> } } };
    expect(Object.getOwnPropertyDescriptor(json.raw_email.headers.parsed, '__proto__')?.value).toBe('polluted');
    expect(json.raw_email.headers.parsed['constructor']).toBe('built');
    expect(json.raw_email.headers.parsed['hasOwnProperty']).toBe('own');
    expect(RawEmailDocument.safeParse(document).success).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
