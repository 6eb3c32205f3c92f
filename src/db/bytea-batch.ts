/**
 * Byte strings of many rows as query parameters, without postgres.js's array
 * literal: it sends each element as hex text and then escapes that text
 * character by character, which cost 75 ms of CPU for one 5 MiB body
 * (bench scenario 7). Here the bytes travel as one bytea parameter with each
 * value's offset and length, and `byteaSlice` cuts a row's value out of it in SQL.
 */
import type postgres from "postgres";
import type { Tx } from "./client";

/** The values joined, and where each one starts in them and its length (both null for a null value). */
export interface ByteaBatch {
  bytes: Buffer;
  offsets: (number | null)[];
  lengths: (number | null)[];
}

export function byteaBatch(values: (Buffer | null)[]): ByteaBatch {
  const offsets: (number | null)[] = [];
  const lengths: (number | null)[] = [];
  let offset = 0;
  for (const value of values) {
    offsets.push(value === null ? null : offset);
    lengths.push(value === null ? null : value.length);
    offset += value?.length ?? 0;
  }
  return { bytes: Buffer.concat(values.filter((value): value is Buffer => value !== null)), offsets, lengths };
}

/**
 * The value of the row whose offset and length columns are `offset` and
 * `length` (columns of the unnested rows, made from the batch's `offsets`
 * and `lengths`), as a SQL expression; null where they are.
 */
export function byteaSlice(tx: Tx, batch: ByteaBatch, offset: string, length: string): postgres.Fragment {
  return tx`substring(${batch.bytes}::bytea from ${tx.unsafe(sliceRange(offset, length))})`;
}

/** The same slice as SQL text, the batch's bytes being the parameter `bytes` (e.g. `$2`), for a statement built once. */
export function byteaSliceSql(bytes: string, offset: string, length: string): string {
  return `substring(${bytes}::bytea from ${sliceRange(offset, length)})`;
}

/** `<offset + 1> for <length>`: `substring` counts from 1. */
function sliceRange(offset: string, length: string): string {
  return `${offset} + 1 for ${length}`;
}
