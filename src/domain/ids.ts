/**
 * Identifiers: a kind prefix and random base58 text, as the hosted service
 * shapes them (`msg_…`, `sig_…`, `jwt_…`). Opaque to clients.
 */
import { randomBytes } from "node:crypto";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** `length` random base58 characters (rejection sampling keeps them uniform). */
export function randomBase58(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 232 && out.length < length) out += BASE58[byte % 58];
    }
  }
  return out;
}

export const newMessageId = () => `msg_${randomBase58(28)}`;
export const newDlqId = () => `dlq_${randomBase58(28)}`;
export const newSigningKey = () => `sig_${randomBase58(28)}`;
export const newJwtId = () => `jwt_${randomBase58(28)}`;
