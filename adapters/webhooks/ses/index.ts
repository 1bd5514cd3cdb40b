/** Amazon SES via SNS: a placeholder until the SES/SNS module lands (every request is refused as unsupported). */
import type { SesEntry } from '../config.js';
import type { ProviderModule } from '../provider.js';
import { refuse } from '../util.js';

export const ses: ProviderModule<SesEntry> = {
  name: 'ses',
  async verify() {
    refuse('unsupported', 'the ses provider is not implemented yet');
  },
  async normalize() {
    return [];
  },
  refusalStatus: (kind) => (kind === 'too_large' ? 413 : kind === 'unavailable' || kind === 'malformed' ? 503 : 400),
  simulate: () => {
    throw new Error('unsupported: the ses provider is not implemented yet');
  },
};
