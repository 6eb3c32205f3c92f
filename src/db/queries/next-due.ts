/**
 * When the work list's next message comes due: an idle worker sleeps until
 * then (claimer.ts), not a poll interval at a time. By the database's clock,
 * as milliseconds from now, so a worker whose clock differs still wakes when
 * the row is due. One index probe per project (`messages_due_idx` leads with
 * the project); on Citus, one statement per project, each routed to its node.
 */
import type { Sql } from "../client";

/** Milliseconds from now until the earliest `due_at` of the rows read. */
const MS_UNTIL_EARLIEST = "ceil(extract(epoch from min(due_at) - now()) * 1000)::float8 as ms";

/** Milliseconds until the earliest message not yet due is due, or null when none waits. */
export async function nextDueInMs(sql: Sql, distributed: boolean): Promise<number | null> {
  if (!distributed) return ms(sql`
    select ${sql.unsafe(MS_UNTIL_EARLIEST)}
    from dispatch.projects p cross join lateral (
      select m.due_at from dispatch.messages m
      where m.project = p.name and m.due_at > now()
      order by m.due_at limit 1) x`);
  const projects = await sql<{ name: string }[]>`select name from dispatch.projects`;
  const each = await Promise.all(projects.map(({ name }) => ms(sql`
    select ${sql.unsafe(MS_UNTIL_EARLIEST)} from dispatch.messages where project = ${name} and due_at > now()`)));
  const known = each.filter((due): due is number => due !== null);
  return known.length === 0 ? null : Math.min(...known);
}

async function ms(query: Promise<{ ms: number | null }[]>): Promise<number | null> {
  const [row] = await query;
  return row!.ms;
}
