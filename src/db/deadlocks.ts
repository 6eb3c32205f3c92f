/**
 * Transactions run again when Postgres cancels them to break a deadlock
 * (SQLSTATE 40P01: the victim is rolled back whole, so running it again is
 * what its caller would do next). Citus reports a cycle it finds across nodes
 * with the same code ("canceling the transaction since it was involved in a
 * distributed deadlock"). For transactions whose work is all in the database.
 */
import type postgres from "postgres";
import type { Sql } from "./client";
import { sqlState } from "./connection/errors";

/** How many times a transaction is tried in all before its deadlock is the caller's. */
const TRIES = 3;

/** `sql.begin(transaction)`, again (up to `TRIES` in all) if it was a deadlock's victim. */
export async function beginRetryingDeadlocks<T>(sql: Sql, transaction: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  for (let tried = 1; ; tried++) {
    try {
      return (await sql.begin(transaction)) as T;
    } catch (error) {
      if (sqlState(error) !== "40P01" || tried === TRIES) throw error;
    }
  }
}
