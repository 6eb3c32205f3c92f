/** The stored message: one row of `dispatch.messages`, as the engine and the API read it, and reading it. */
import type { Tx } from "../../db/client";
import { type MessageRow, messageColumns } from "../../db/message-columns";

export type StoredMessage = MessageRow;

/** Reads a message as the worker and the API see it; null when unknown. */
export async function findMessage(tx: Tx, id: string): Promise<StoredMessage | null> {
  const [message] = await findMessages(tx, [id]);
  return message ?? null;
}

/** Reads a message of `project` as the API shows it; null when unknown there (another project's is unknown). */
export async function findOwnMessage(tx: Tx, project: string, id: string): Promise<StoredMessage | null> {
  const [message] = await tx<StoredMessage[]>`
    select ${messageColumns(tx, "m")} from dispatch.messages m where m.id = ${id} and m.project = ${project}`;
  return message ?? null;
}

/** Reads the messages with `ids` (unknown ids are left out). */
export function findMessages(tx: Tx, ids: string[]): Promise<StoredMessage[]> {
  return tx<StoredMessage[]>`select ${messageColumns(tx, "m")} from dispatch.messages m where m.id = any(${ids}::text[])`;
}
