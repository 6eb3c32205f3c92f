/**
 * The message row as the engine and the API read it: one column list, made
 * from the drizzle table, so a new column is added in `schema.ts` only.
 */
import { getTableColumns } from "drizzle-orm";
import type { Tx } from "./client";
import { messages } from "./schema";

/** A `dispatch.messages` row with camel-case keys, as every query here returns it. */
export type MessageRow = typeof messages.$inferSelect;

const columns = Object.entries(getTableColumns(messages));

/** `alias.column as "key", …` for every column of the message table. */
export function messageColumns(tx: Tx, alias: string) {
  return tx.unsafe(messageColumnList(alias));
}

/** The same list as SQL text, leaving out the columns (by key) in `except`, for a statement built once. */
export function messageColumnList(alias: string, except: (keyof MessageRow)[] = []): string {
  return columns
    .filter(([key]) => !except.includes(key as keyof MessageRow))
    .map(([key, column]) => `${alias}.${column.name} as "${key}"`)
    .join(", ");
}

/** `"key" type, …` for every column of the message table: a column definition list for a function returning its rows. */
export function messageColumnTypes(): string {
  return columns.map(([key, column]) => `"${key}" ${column.getSQLType()}`).join(", ");
}
