/**
 * The user properties the service generates for a raw email (spec "Email comments generated
 * from raw emails"), and how client properties merge with them. The value rule of each
 * property is documented in docs/preview.md; an absent value is omitted, never empty.
 */
import type { UserProperties } from '../model/index.js';
import { GENERATED_PROPERTIES, propertyName } from '../model/names.js';
import type { Address } from '../mime/headers.js';

export interface PropertyInput {
  from?: Address | undefined;
  to: readonly Address[];
  cc: readonly Address[];
  bcc: readonly Address[];
  /** The Message-ID without angle brackets. */
  messageId?: string | undefined;
  threadId: string;
  hasSignature: boolean;
  /** thread_position when known; 0 for a message previewed without its thread. */
  position: number;
}

const GENERATED_NAMES: ReadonlySet<string> = new Set(Object.keys(GENERATED_PROPERTIES));

export function isGeneratedName(name: string): boolean {
  return GENERATED_NAMES.has(name);
}

function addressOf(a: Address | undefined): string | undefined {
  const v = a?.address?.trim().toLowerCase();
  return v === undefined || v === '' ? undefined : v;
}

function domainOf(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const at = address.lastIndexOf('@');
  const d = at < 0 ? '' : address.slice(at + 1).replace(/^\[|\]$/g, '');
  return d === '' ? undefined : d;
}

/** The addresses of the lists, lowercased, each once (most messages name a handful: no Set for them). */
function uniqueAddresses(...lists: ReadonlyArray<readonly Address[]>): string[] {
  const out: string[] = [];
  let seen: Set<string> | undefined;
  for (const list of lists) {
    for (const a of list) {
      const k = addressOf(a);
      if (k === undefined) continue;
      if (seen !== undefined) {
        if (!seen.has(k)) {
          seen.add(k);
          out.push(k);
        }
      } else if (!out.includes(k)) {
        out.push(k);
        if (out.length >= 16) seen = new Set(out);
      }
    }
  }
  return out;
}

/** The generated properties of one message. */
export function generatedProperties(input: PropertyInput): UserProperties {
  const out: UserProperties = {};
  out['string:Has Signature'] = input.hasSignature ? 'true' : 'false';
  const sender = addressOf(input.from);
  if (sender !== undefined) out['string:Sender'] = sender;
  if (input.threadId !== '') out['string:Thread'] = input.threadId;
  const mid = input.messageId?.trim();
  if (mid !== undefined && mid !== '') out['string:Message ID'] = mid;
  const domain = domainOf(sender);
  if (domain !== undefined) out['string:Sender Domain'] = domain;
  // The participants are the recipients and the sender: counted from one list.
  const recipients = uniqueAddresses(input.to, input.cc, input.bcc);
  out['number:Recipient Count'] = recipients.length;
  out['number:Participant Count'] = recipients.length + (sender !== undefined && !recipients.includes(sender) ? 1 : 0);
  out['number:Position in Thread'] = input.position;
  return out;
}

export interface MergeOptions {
  /** Names (without the type prefix) whose client values override the generated ones. */
  override: readonly string[];
}

export interface MergeReport {
  properties: UserProperties;
  /** Client keys dropped because their name is generated and not listed in `override`. */
  dropped: string[];
  /** Client keys that replaced a generated property. */
  overridden: string[];
}

/** Merges with a report of what was dropped or overridden. */
export function mergeUserPropertiesReport(generated: UserProperties, client: UserProperties, options: MergeOptions): MergeReport {
  const override = new Set(options.override);
  const out: UserProperties = { ...generated };
  const dropped: string[] = [];
  const overridden: string[] = [];
  for (const [key, value] of Object.entries(client)) {
    const name = propertyName(key);
    if (name === undefined || !isGeneratedName(name)) {
      out[key] = value;
    } else if (override.has(name)) {
      for (const k of Object.keys(out)) if (propertyName(k) === name) delete out[k];
      out[key] = value;
      overridden.push(key);
    } else {
      dropped.push(key);
    }
  }
  return { properties: out, dropped, overridden };
}

/**
 * Client properties merged into the generated ones. A client property whose name the service
 * generates wins only when the name is listed in `override` (it then replaces the generated
 * value, whatever its type prefix); otherwise the generated value stays and the client's is
 * dropped (the service itself would refuse such a request with 422). Other client properties
 * are added as they are.
 */
export function mergeUserProperties(generated: UserProperties, client: UserProperties, options: MergeOptions): UserProperties {
  return mergeUserPropertiesReport(generated, client, options).properties;
}
