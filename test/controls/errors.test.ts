/** One vocabulary of mailbox failures: every IMAP, Graph and Gmail refusal maps onto a kind an operator acts on. */
import { describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../adapters/config.js';
import { mailboxErrorKind } from '../../src/controls/index.js';
import { MAPPED_CODES } from '../../src/controls/errors.js';

describe('mailbox error kinds', () => {
  it('maps the refusals of each kind onto the same kinds', () => {
    expect(mailboxErrorKind('MAILGATE_ERR_IMAP_AUTH')).toBe('bad_credentials');
    expect(mailboxErrorKind('MAILGATE_ERR_GRAPH_UNAUTHORIZED')).toBe('bad_credentials');
    expect(mailboxErrorKind('MAILGATE_ERR_GMAIL_TOKEN')).toBe('bad_credentials');
    expect(mailboxErrorKind('MAILGATE_ERR_GRAPH_FORBIDDEN')).toBe('access_denied');
    expect(mailboxErrorKind('MAILGATE_ERR_GMAIL_DELEGATION')).toBe('insufficient_scope');
    expect(mailboxErrorKind('MAILGATE_ERR_IMAP_FOLDER_NOT_FOUND')).toBe('not_found');
    expect(mailboxErrorKind('MAILGATE_ERR_GMAIL_RATE_LIMITED')).toBe('quota');
    expect(mailboxErrorKind('MAILGATE_ERR_SOMETHING_ELSE')).toBe('other');
    expect(mailboxErrorKind(undefined)).toBe('other');
  });

  it('names only codes the catalogue declares', () => {
    const known = new Set(Object.keys(errorCatalogue()));
    expect(MAPPED_CODES.filter((code) => !known.has(code))).toEqual([]);
  });
});
