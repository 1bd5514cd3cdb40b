/**
 * Keys that pass a length check yet are publicly known: the placeholders of samples and
 * tutorials. A configuration holding one is refused, so that a copied sample never runs with
 * a key everyone can read. The list is short on purpose and documented in docs/security.md.
 */
const PLACEHOLDER_KEY_RES: readonly RegExp[] = [
  /^(change|replace)[-_ .]?(me|this|it)/i, // change-me…, changeme, replace-me…, change_this…
  /^your[-_ .]/i, // your-admin-key, your_api_key_here
  /^<.*>$/, // <your key here>
  /^x{8,}/i, // xxxxxxxx…
  /^(.)\1*$/s, // one character repeated: aaaaaaaaaaaaaaaa, 0000000000000000
  /^(placeholder|example|dummy|insert)([-_ .]|$)/i, // placeholder-key, example_key, insert-key-here
];

/** Whether `key` is a known placeholder rather than a secret (case-insensitive, surrounding whitespace ignored). */
export function isPlaceholderKey(key: string): boolean {
  const k = key.trim();
  return PLACEHOLDER_KEY_RES.some((re) => re.test(k));
}
