/**
 * Functions Citus runs on the node of the project their first argument names
 * (docs/citus.md, rule 7). Called alone, outside a transaction
 * block, `select f(project, ...)` is forwarded by the coordinator to that node
 * as it is: the coordinator neither plans nor routes what the function does
 * (an empty claim cost a coordinator backend 3.2 ms of CPU routed, 0.5 ms
 * delegated; the record of deliveries: docs/citus.md, "Measured").
 *
 * `makeDelegatedFunctions` runs at each `dispatch migrate` of a distributed
 * database and makes again those whose definition is not this build's (each
 * carries its definition's digest as its comment); a plain database has none.
 * The functions themselves live beside the statements they stand for, in
 * db/queries/ (as every transition of a message does).
 */
import { createHash } from "node:crypto";
import type { Tx } from "../client";

/** A function made by its `definition` (create or replace), delegated on its first argument, `p_project`. */
export interface DelegatedFunction {
  signature: string;
  definition: string;
}

/**
 * Makes each of `functions` that is missing or not this build's, and registers it with Citus for
 * delegation beside the messages' shards; a start or a command on a current database changes nothing
 * (no DDL sent to every node).
 */
export async function makeDelegatedFunctions(tx: Tx, functions: DelegatedFunction[]): Promise<void> {
  for (const { definition, signature } of functions) {
    const digest = createHash("sha256").update(definition).digest("hex");
    const [made] = await tx<{ current: boolean }[]>`
      select coalesce(obj_description(to_regprocedure(${signature}), 'pg_proc') = ${digest}, false) as current`;
    if (made!.current) continue;
    await tx.unsafe(definition);
    await tx`select create_distributed_function(${signature}, 'p_project', colocate_with => 'dispatch.messages')`;
    await tx.unsafe(`comment on function ${signature} is '${digest}'`);
  }
}

/** Drops the functions of `signatures` (of an earlier build, whose calls this one no longer makes) where they exist. */
export async function dropRetiredFunctions(tx: Tx, signatures: string[]): Promise<void> {
  for (const signature of signatures) {
    const [found] = await tx<{ exists: boolean }[]>`select to_regprocedure(${signature}) is not null as exists`;
    if (found!.exists) await tx.unsafe(`drop function ${signature}`);
  }
}
