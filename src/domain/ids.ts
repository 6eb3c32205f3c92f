/**
 * Identifiers: a kind prefix and random base58 text, as the hosted service
 * shapes them (`msg_…`, `sig_…`, `jwt_…`). Opaque to clients.
 */
import { randomBytes } from "node:crypto";

const BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/** Random bytes drawn from a pooled buffer: one system call per 4 KiB instead of one per id. */
const pool = { bytes: randomBytes(4096), next: 0 };

function randomByte(): number {
  if (pool.next === pool.bytes.length) {
    pool.bytes = randomBytes(4096);
    pool.next = 0;
  }
  return pool.bytes[pool.next++]!;
}

/** `length` random base58 characters (rejection sampling keeps them uniform). */
export function randomBase58(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 232) out += BASE58[byte % 58];
  }
  return out;
}

export const newMessageId = () => `msg_${randomBase58(28)}`;
export const newDlqId = () => `dlq_${randomBase58(28)}`;
export const newSigningKey = () => `sig_${randomBase58(28)}`;
export const newJwtId = () => `jwt_${randomBase58(28)}`;
export const newScheduleId = () => `scd_${randomBase58(28)}`;
