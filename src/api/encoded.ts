/**
 * A request body serialized by the caller: the batcher splices stored document text into
 * the envelope instead of building (and then serializing) an object graph per document.
 */
export interface EncodedRequest {
  /** The JSON body, exactly as sent. */
  readonly json: string;
  /** How many documents it holds (the answer is checked against it). */
  readonly documents: number;
}

export function isEncodedRequest(value: unknown): value is EncodedRequest {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as EncodedRequest).json === 'string' &&
    typeof (value as EncodedRequest).documents === 'number'
  );
}
