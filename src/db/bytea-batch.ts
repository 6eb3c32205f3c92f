/**
 * Byte strings of many rows as query parameters, without postgres.js's array
 * literal: it sends each element as hex text and then escapes that text
 * character by character, which cost 75 ms of CPU for one 5 MiB body
 * (bench scenario 7). Here the bytes travel as one bytea parameter with their
 * lengths, and `byteaSlice` cuts row n's value out of it in SQL.
 */
import type postgres from "postgres";
import type { Tx } from "./client";

/** The values joined, and each one's length (null for a null value). */
export interface ByteaBatch {
  bytes: Buffer;
  lengths: (number | null)[];
}

export function byteaBatch(values: (Buffer | null)[]): ByteaBatch {
  return {
    bytes: Buffer.concat(values.filter((value): value is Buffer => value !== null)),
    lengths: values.map((value) => (value === null ? null : value.length)),
  };
}

/**
 * The value of the row whose length column is `length` and whose position
 * (1-based, in the order of the batch) is `n`, both columns of the unnested
 * rows, as a SQL expression.
 */
export function byteaSlice(tx: Tx, batch: ByteaBatch, length: string, n: string): postgres.Fragment {
  return tx`substring(${batch.bytes}::bytea from ${tx.unsafe(sliceRange(length, n))})`;
}

/** The same slice as SQL text, the batch's bytes being the parameter `bytes` (e.g. `$31`), for a statement built once. */
export function byteaSliceSql(bytes: string, length: string, n: string): string {
  return `substring(${bytes}::bytea from ${sliceRange(length, n)})`;
}

/** `<offset + 1> for <length>`: where row n's value starts in the joined bytes, and its length. */
function sliceRange(length: string, n: string): string {
  return `(sum(coalesce(${length}, 0)) over (order by ${n}) - coalesce(${length}, 0))::int + 1 for ${length}`;
}
