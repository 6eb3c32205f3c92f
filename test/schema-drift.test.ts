/**
 * Schema drift: `src/db/schema.ts`, the migrations and the checked-in dump of
 * the migrated schema (`test/schema.txt`) must agree. `schema.ts` against
 * the last migration's snapshot: drizzle-kit generates no statement. The
 * migrations against the dump: a freshly migrated database's catalog reads
 * the same. After a deliberate change, regenerate the dump with
 * `DISPATCH_WRITE_SCHEMA_DUMP=1 npx vitest run test/schema-drift.test.ts`
 * and review its diff.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generateDrizzleJson, generateMigration } from "drizzle-kit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../src/db/client";
import * as schema from "../src/db/schema";
import { cloneDatabase } from "./support/database";

const META = fileURLToPath(new URL("../sql/migrations/meta/", import.meta.url));
const DUMP = fileURLToPath(new URL("./schema.txt", import.meta.url));

let sql: Sql;

beforeAll(async () => {
  sql = createSql(await cloneDatabase(), 1);
});
afterAll(async () => {
  await sql.end();
});

/** The `dispatch` schema as the catalog describes it, one sorted line per object. */
async function catalog(): Promise<string> {
  // The catalog's definitions name other objects with their schema unless it is on the search path:
  // the same path on every server makes the dump the same.
  const rows = await sql.begin(async (tx) => {
    await tx`set local search_path to dispatch, public`;
    return tx<{ line: string }[]>`
    select format('table %s: %s %s%s%s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
      case when a.attnotnull then ' not null' else '' end,
      coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')) as line
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid and c.relkind in ('r', 'p')
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'dispatch'
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attnum > 0 and not a.attisdropped
    union all
    select format('index %s', pg_get_indexdef(i.indexrelid))
    from pg_index i join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'dispatch'
    union all
    select format('constraint %s.%s: %s', c.relname, k.conname, pg_get_constraintdef(k.oid))
    from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'dispatch'
    union all
    select format('view %s: %s', c.relname, regexp_replace(pg_get_viewdef(c.oid), '\\s+', ' ', 'g'))
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'dispatch' and c.relkind = 'v'
    union all
    select format('function %s: %s', p.proname, md5(pg_get_functiondef(p.oid)))
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'dispatch'
    union all
    select format('storage %s: %s', c.relname, array_to_string(c.reloptions, ','))
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'dispatch' and c.reloptions is not null
    order by 1`;
  });
  return `${rows.map((row) => row.line).join("\n")}\n`;
}

describe("the schema", () => {
  it("schema.ts matches the last migration: drizzle-kit would generate nothing", async () => {
    const snapshots = readdirSync(META).filter((name) => name.endsWith("_snapshot.json")).sort();
    const last = JSON.parse(readFileSync(`${META}${snapshots.at(-1)!}`, "utf8"));
    const current = generateDrizzleJson(schema, last.id, ["dispatch"]);
    expect(await generateMigration(last, current)).toEqual([]);
  });

  it("the migrations build the schema the dump records", async () => {
    const migrated = await catalog();
    if (process.env.DISPATCH_WRITE_SCHEMA_DUMP === "1") writeFileSync(DUMP, migrated);
    expect(migrated).toBe(readFileSync(DUMP, "utf8"));
  });
});
