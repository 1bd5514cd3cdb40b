import { describe, expect, it } from 'vitest';
import { labelName } from '../../src/cli/commands/predictions.js';

describe('mailgate predictions list: label names', () => {
  it.each([
    [['Billing', 'Refund'], 'Billing > Refund'],
    [['Praise'], 'Praise'],
    ['Billing > Refund', 'Billing > Refund'], // a string name (notes §3.2), e.g. a row stored by an older mailgate
  ])('%j -> %s', (name, expected) => {
    expect(labelName(name)).toBe(expected);
  });
});
