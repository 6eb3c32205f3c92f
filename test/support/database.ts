/** A fresh database per test file, cloned from the migrated template. */
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createSql } from "../../src/db/client";
import { TEMPLATE, TEST_DATABASE_PREFIX, withDatabase } from "./global-setup";

/** Creates a new database from the template and returns its URL. */
export async function cloneDatabase(): Promise<string> {
  const adminUrl = inject("adminUrl");
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(6).toString("hex")}`;
  const admin = createSql(adminUrl, 1);
  try {
    await admin.unsafe(`create database ${name} template ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  return withDatabase(adminUrl, name);
}
