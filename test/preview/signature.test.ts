import { describe, expect, it } from 'vitest';
import { splitSignature } from '../../src/preview/signature.js';

describe('splitSignature', () => {
  it('splits at the "-- " delimiter', () => {
    expect(splitSignature('Hi!\n\n-- \nAnna Berg\nACME')).toEqual({ body: 'Hi!', signature: '-- \nAnna Berg\nACME' });
  });

  it.each([
    ['Thanks,', 'en'],
    ['Best regards,', 'en'],
    ['Mit freundlichen Grüßen', 'de'],
    ['Viele Grüße', 'de'],
    ['Cordialement,', 'fr'],
    ['Bien à vous,', 'fr'],
    ['Saludos,', 'es'],
    ['Un saludo,', 'es'],
    ['Met vriendelijke groet,', 'nl'],
    ['Groeten,', 'nl'],
    ['Atenciosamente,', 'pt'],
    ['Obrigado,', 'pt'],
  ])('splits at the sign-off %s (%s) followed by a name block', (signOff) => {
    const r = splitSignature(`The order ships on Monday.\n\n${signOff}\nAnna Berg\nSales | ACME`);
    expect(r).toEqual({ body: 'The order ships on Monday.', signature: `${signOff}\nAnna Berg\nSales | ACME` });
  });

  it.each([
    'Sent from my iPhone',
    'Get Outlook for iOS',
    'Von meinem iPhone gesendet',
    'Envoyé de mon iPhone',
    'Enviado desde mi iPhone',
    'Verzonden vanaf mijn iPhone',
    'Enviado do meu iPhone',
  ])('splits the mobile footer "%s"', (footer) => {
    expect(splitSignature(`On my way.\n\n${footer}`)).toEqual({ body: 'On my way.', signature: footer });
  });

  it('puts a sign-off above a mobile footer into the signature', () => {
    expect(splitSignature('On my way.\n\nThanks,\nAnna\n\nSent from my iPhone')).toEqual({
      body: 'On my way.',
      signature: 'Thanks,\nAnna\n\nSent from my iPhone',
    });
  });

  it('splits a trailing dash-name', () => {
    expect(splitSignature('Hey!\n-roman')).toEqual({ body: 'Hey!', signature: '-roman' });
  });

  it('takes a sign-off with the name on the same line', () => {
    expect(splitSignature('See you.\n\nCheers, Anna')).toEqual({ body: 'See you.', signature: 'Cheers, Anna' });
  });

  it('does not take a sentence that starts with a sign-off word', () => {
    const text = 'Hello,\n\nThanks for the update, that works for us.';
    expect(splitSignature(text)).toEqual({ body: text });
    expect(splitSignature('Hi\n\nThanks in anticipation of your reply')).toEqual({ body: 'Hi\n\nThanks in anticipation of your reply' });
  });

  it('does not split when prose follows the sign-off', () => {
    const text = 'Hi,\n\nThanks!\nCan you also send the invoice for March when you get a chance?';
    expect(splitSignature(text)).toEqual({ body: text });
  });

  it('does not split when nothing would remain of the body', () => {
    expect(splitSignature('--\nRoman')).toEqual({ body: '--\nRoman' });
    expect(splitSignature('Thanks!')).toEqual({ body: 'Thanks!' });
  });

  it('returns no signature for an empty text', () => {
    expect(splitSignature('')).toEqual({ body: '' });
  });
});
