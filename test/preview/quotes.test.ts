import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadOwnCases } from '../../bench/quotes.js';
import { splitReply, stripQuotes } from '../../src/preview/quotes.js';
import { VERB, endsLikeSplitter } from '../../src/preview/quote-patterns.js';
import { splitSignature } from '../../src/preview/signature.js';

const cases = loadOwnCases(join(import.meta.dirname, '..', '..', 'samples', 'quotes'));

describe('splitReply on samples/quotes (six languages, Gmail / Apple Mail / Outlook / Thunderbird)', () => {
  it('has cases for every supported language', () => {
    for (const lang of ['en', 'de', 'fr', 'es', 'nl', 'pt']) {
      expect(cases.filter((c) => c.id.startsWith(`mailgate/${lang}-`)).length).toBeGreaterThanOrEqual(5);
    }
  });
  for (const c of cases) {
    it(c.id, () => {
      const r = splitReply(c.input);
      expect(r.body).toBe(c.body);
      expect(r.signature).toBe(c.signature);
    });
  }
});

const SPLITTERS = [
  'On Tue, Mar 5, 2024 at 10:15 AM Sarah Jones <sarah@example.com> wrote:',
  'On Tuesday, March 5, 2024, 10:15:00 AM GMT+1, Sarah Jones <sarah@example.com> wrote:',
  'On 3/5/24 10:15, Sarah Jones wrote:',
  'Sarah Jones <sarah@example.com> wrote:',
  '----- Original Message -----\nFrom: Sarah\nTo: Tom\nSent: Tuesday, March 05, 2024 10:15 AM\nSubject: x',
  'From: Sarah Jones\nDate: Tuesday, 5 March 2024 at 10:15\nTo: Tom\nSubject: x',
  'Am Di., 5. März 2024 um 10:15 Uhr schrieb Sarah Jonas <sarah@example.de>:',
  'Sarah Jonas <sarah@example.de> schrieb am Di., 5. März 2024, 10:15:',
  'Von: Sarah Jonas <s@example.de>\nDatum: Dienstag, 5. März 2024 um 10:15\nAn: Tom\nBetreff: x',
  'Le mar. 5 mars 2024 à 10:15, Sarah Dupont <\nsarah@example.fr> a écrit :',
  'Sarah Dupont <sarah@example.fr> a écrit :',
  'De : Sarah Dupont\nEnvoyé : mardi 5 mars 2024 10:15\nÀ : Tom\nCc : Compta\nObjet : RE: x',
  'El mar., 5 mar. 2024 10:15, Sarah (<s@example.es>) escribió:',
  'De: Sarah García <s@example.es>\nEnviado el: martes, 5 de marzo de 2024 10:15\nPara: Tom\nAsunto: x',
  'Op 5 mrt. 2024 om 10:15 heeft Sarah de Vries <s@example.nl> het volgende geschreven:',
  'Van: Sarah de Vries\nVerzonden: dinsdag 5 maart 2024 10:15\nAan: Tom\nOnderwerp: x',
  'Em 5 de mar. de 2024, à(s) 10:15, Sara Costa <s@example.com.br> escreveu:',
  'De: Sara Costa\nEnviada em: terça-feira, 5 de março de 2024 10:15\nPara: Tom\nAssunto: x',
  'Il giorno mar 5 mar 2024 alle ore 10:15 Sara Rossi <sara@example.it> ha scritto:',
  'W dniu 5.03.2024 o 10:15, Sara <s@example.pl> pisze:',
];

describe('splitters of many clients and languages', () => {
  for (const splitter of SPLITTERS) {
    it(splitter.split('\n')[0]!, () => {
      expect(stripQuotes(`Reply text here.\n\n${splitter}\n\n> old quoted\n> more`)).toBe('Reply text here.');
      expect(stripQuotes(`Reply text here.\n\n${splitter}\n\nold unquoted text\nmore`)).toBe('Reply text here.');
    });
  }
});

describe('stripQuotes', () => {
  it('keeps a message without quotes as it is', () => {
    expect(stripQuotes('Hello,\n\nsee you at 10.\n')).toBe('Hello,\n\nsee you at 10.');
  });

  it('cuts an "On … wrote:" wrapped over three lines', () => {
    const text =
      'Fine by me.\n\nOn Wed, 6 Mar 2024 at 09:12, A Very Long Display Name From Some\nCompany <\nsomeone@example.com> wrote:\n\nOld text';
    expect(stripQuotes(text)).toBe('Fine by me.');
  });

  it('cuts "On … wrote:" that shares a line with the reply', () => {
    expect(stripQuotes('ok thanks On Wed, Apr 4, 2012 at 3:59 PM, bob@example.com wrote:\n> Hi')).toBe('ok thanks');
  });

  it('keeps text written below the quotation (bottom posting)', () => {
    const text = 'On 04/19/2011 07:10 AM, Roman wrote:\n\n> question\n> more\n\nanswer';
    expect(stripQuotes(text)).toBe('answer');
  });

  it('keeps inline replies whole', () => {
    const text = 'See inline.\nOn 04/19/2011 07:10 AM, Roman wrote:\n> Q1\nA1\n> Q2\nA2';
    expect(stripQuotes(text)).toBe(text);
  });

  it('keeps one or two lone ">" lines when there is no splitter', () => {
    const text = 'About this:\n> a quoted sentence\nI disagree.';
    expect(stripQuotes(text)).toBe(text);
  });

  it('removes a run of three ">" lines without a splitter', () => {
    expect(stripQuotes('Reply\n\n> a\n> b\n> c')).toBe('Reply');
  });

  it('finds a header block written inside a quote', () => {
    expect(stripQuotes('Reply\n> From: "A" <a@example.com>\n> Sent: Tuesday, January 13, 2009 1:27 PM')).toBe('Reply');
  });

  it('accepts bold (Outlook HTML converted) header names', () => {
    const text =
      'Hi\n\n*From:* bob@example.com [mailto:\nbob@example.com]\n*Sent:* Wednesday, June 27, 2012 3:05 PM\n*To:* travis@example.com\n*Subject:* Hello';
    expect(stripQuotes(text)).toBe('Hi');
  });

  it('keeps a message that is only a forward (nothing written above the marker)', () => {
    const text = '---------- Forwarded message ---------\nFrom: a@example.com\nDate: Mon, 4 Mar 2024\n\nForwarded text';
    expect(stripQuotes(text)).toBe(text);
  });

  it('keeps the whole text when nothing would remain', () => {
    const text = '-----Original Message-----\nFrom: a@example.com\nSent: Monday\n\nOld text';
    expect(stripQuotes(text)).toBe(text);
  });

  it('does not take "On" at the start of an ordinary sentence for a splitter', () => {
    const text = 'On Monday we ship 3 pallets.\nThe driver wrote: "fragile"';
    expect(stripQuotes(text)).toBe(text);
  });

  it('reads Eudora\'s "At <time> <date>, X wrote:" and does not take "AM" for the German "Am"', () => {
    const text = 'Good point.\n\nAt 11:14 AM 7/26/2002 -0400, Tom wrote:\n>On Fri, 26 Jul 2002, Tom wrote:\n>\n>text';
    expect(stripQuotes(text)).toBe('Good point.');
  });

  it('treats Supercite initials (EL>) as quote marks', () => {
    expect(stripQuotes('Agreed.\n\nEL> On Sun, 8 Sep 2002, CDale wrote:\nEL> one\nEL> two')).toBe('Agreed.');
  });

  it('keeps "From:" / "Date:" lines of running text that are no quoted header block (false-header-block regression)', () => {
    expect(stripQuotes('Please note:\nFrom: the warehouse\nDate: tomorrow\nwe ship.')).toBe(
      'Please note:\nFrom: the warehouse\nDate: tomorrow\nwe ship.',
    );
    expect(stripQuotes('Plan:\n\nFrom: The warehouse\nDate: next week\nwe ship.')).toBe(
      'Plan:\n\nFrom: The warehouse\nDate: next week\nwe ship.',
    );
    // Real blocks still cut: a sender with a date, a sender with an address, a date with an address.
    expect(stripQuotes('Yes.\n\nFrom: Bob\nSent: Monday, January 8, 2024 9:00 AM\nold')).toBe('Yes.');
    expect(stripQuotes('Yes.\n\nFrom: bob@example.com\nTo: Anna\nold')).toBe('Yes.');
    expect(stripQuotes('Yes.\n\nDate: Wed, 16 May 2012 00:15:02 -0600\nTo: anna@example.com')).toBe('Yes.');
  });

  it('takes a rule line ("---" from an HTML <hr>) above a header block into the splitter (outlook-html-rule regression)', () => {
    const r = splitReply(
      'Sounds good.\n\nKind regards,\nAnna\n\n---\n\nFrom: Bob <bob@x.com>\nSent: Monday, January 1, 2024 9:00 AM\nTo: Anna\nSubject: x\nOriginal question',
    );
    expect(r).toEqual({ body: 'Sounds good.', signature: 'Kind regards,\nAnna' });
    // A rule with ordinary text below it is no splitter.
    expect(stripQuotes('Agenda\n\n---\n\nFrom: the warehouse\nDate: soon')).toContain('---');
  });

  it('keeps a header-like line inside a listing of other "Key: value" lines', () => {
    const text = 'Please approve:\n\n  List:    iiu@example.org\n  From:    someone@example.com\n  Subject: hello\n  Reason:  non-member';
    expect(stripQuotes(text)).toBe(text);
  });

  it('keeps a "--- begin forwarded text" message whole', () => {
    const text = '--- begin forwarded text\n\nDate: Sat, 24 Aug 2002 11:39:34 -0400\nFrom: Somebody\nSubject: joke\n\nQ. Why?';
    expect(stripQuotes(text)).toBe(text);
  });

  it('handles CRLF line breaks', () => {
    expect(stripQuotes('Yes.\r\n\r\nOn Tue, Mar 5, 2024 at 10:15 AM Ann <ann@example.com> wrote:\r\n> Q?\r\n')).toBe('Yes.');
  });
});

describe('splitReply stays cheap on hostile input', () => {
  it('finishes on long lines full of splitter words', () => {
    const line = 'On 1, '.repeat(20_000) + ' wrote';
    const r = splitReply(`${line}\n${'> x\n'.repeat(1000)}`);
    expect(typeof r.body).toBe('string');
  });

  it('finishes on many lines that each look like the start of a splitter', () => {
    const text = 'Am 5.3.2024 um 10:15 schrieb\n'.repeat(30_000);
    expect(typeof splitReply(text).body).toBe('string');
  });

  it('never throws, and only ever returns lines of its input', () => {
    const line = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom(
        '> quoted',
        'On Tue, Mar 5, 2024 at 10:15 AM Ann <ann@example.com> wrote:',
        'From: a@example.com',
        'Sent: Monday',
        '-- ',
        'Thanks,',
        'Sent from my iPhone',
        '',
        '-----Original Message-----',
      ),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), (lines) => {
        const input = lines.join('\n');
        const r = splitReply(input);
        const pool = new Set(input.split('\n').map((l) => l.trim()));
        for (const l of `${r.body}\n${r.signature ?? ''}`.split('\n')) expect(pool.has(l.trim()) || l.trim() === '').toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('splitReply reuses the lines of the stripped reply', () => {
  const body = (n: number, tail: string): string[] =>
    Array.from({ length: n }, (_, i) => `line ${i} of the reply${i % 3 === 0 ? tail : ''}`);
  const texts = [
    ['', '  ', ...body(120, ''), '', 'Thanks,', 'Anna', ''].join('\n'),
    [...body(120, ' \t'), 'Thanks,', 'Anna  '].join('\n'),
    [...body(79, ''), '-- ', 'Anna Smith', 'ACME'].join('\r\n'),
    [...body(150, '\u00a0'), '', 'On Mon, 3 Jun 2024 at 10:00, Bob <bob@example.com> wrote:', '> old', '> older', '', '-- ', 'Anna'].join(
      '\n',
    ),
    ['> a', '> b', '> c', '', ...body(90, ''), 'Best regards', 'Anna'].join('\n'),
    ['\u2003', 'Sent from my iPhone'].join('\n'),
    ' \n \n',
  ];
  it('gives what splitSignature gives on the stripped text (over and under the 80-line tail, trailing whitespace, CRLF)', () => {
    for (const text of texts) expect(splitReply(text)).toEqual(splitSignature(stripQuotes(text)));
    expect(splitReply(texts[0]!).signature).toBe('Thanks,\nAnna');
    expect(splitReply(texts[3]!).body).not.toContain('older');
  });
});

describe('endsLikeSplitter', () => {
  const splitterEnd = new RegExp(String.raw`(?:${VERB}\s*-*|:\s*-*)$`, 'iu');
  const verbs = VERB.slice(3, -1).split('|');
  const piece = fc.oneof(
    fc.constantFrom(...verbs),
    fc.constantFrom(...verbs).map((v) => v.toUpperCase()),
    fc.constantFrom(
      ':',
      '-',
      '--',
      ' ',
      '  ',
      '\t',
      '\u00a0',
      '\u2003',
      'x',
      'é',
      'É',
      'ł',
      'Ł',
      'ſ',
      '\u212a',
      'a ',
      'het ',
      'wrote-',
      'x'.repeat(40),
    ),
  );
  it('is the /(?:VERB\\s*-*|:\\s*-*)$/iu test on the last 60 characters', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        expect(endsLikeSplitter(text)).toBe(splitterEnd.test(text.length > 60 ? text.slice(-60) : text));
      }),
      { numRuns: 20_000 },
    );
    expect(endsLikeSplitter('Bob <bob@example.com> WROTE: --')).toBe(true);
    expect(endsLikeSplitter('Bob schrieb am 3.6.2024:')).toBe(true);
    expect(endsLikeSplitter('I wrote - x')).toBe(false);
  });
});
