/**
 * Quotas per project (optional, `dispatch project limit`): messages a day
 * (UTC) and publish requests a second, answered when exceeded as the hosted
 * service answers (a 429 with one family of rate-limit headers,
 * ../shared/spec/compat-api.md §1.6: `RateLimit-*` for the daily quota,
 * `Burst-RateLimit-*` for the rate), on the endpoints that create messages.
 *
 * The daily count is kept in `dispatch.project_usage`, one row a project a
 * day, raised in one statement only while it stays within the quota, so
 * every replica counts against the same figure. The rate is counted by each
 * API process in one-second windows: a limit per process. A project without
 * quotas costs a lookup in memory; quotas are read again every few seconds.
 */
import type { Sql, Tx } from "../../db/client";
import { AppError, badRequest } from "../errors";

/** A project's quotas; null for none. */
export interface Quota {
  messagesPerDay: number | null;
  publishesPerSecond: number | null;
}

/** How long a process keeps a project's quotas before reading them again. */
const QUOTA_TTL_MS = 5_000;

/** The quotas of the projects one API process serves, and its count of their publishes this second. */
export class Quotas {
  private readonly known = new Map<string, { quota: Promise<Quota>; readAt: number }>();
  private readonly seconds = new Map<string, { second: number; count: number }>();

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts a publish request of `project` making `messages` messages; a 429 when a quota is exceeded. */
  async admit(project: string, messages: number): Promise<void> {
    const quota = await this.quotaOf(project);
    if (quota.publishesPerSecond !== null) this.countRequest(project, quota.publishesPerSecond);
    if (quota.messagesPerDay !== null && messages > 0) await this.countMessages(project, messages, quota.messagesPerDay);
  }

  private quotaOf(project: string): Promise<Quota> {
    const kept = this.known.get(project);
    if (kept !== undefined && this.now() - kept.readAt < QUOTA_TTL_MS) return kept.quota;
    const quota = readQuota(this.sql, project).catch((error: unknown) => {
      this.known.delete(project);
      throw error;
    });
    this.known.set(project, { quota, readAt: this.now() });
    return quota;
  }

  private countRequest(project: string, limit: number): void {
    const second = Math.floor(this.now() / 1000);
    const window = this.seconds.get(project);
    const count = window?.second === second ? window.count : 0;
    const reset = { "Burst-RateLimit-Limit": String(limit), "Burst-RateLimit-Reset": String(second + 1) };
    if (count >= limit) {
      throw new AppError(429, `project ${project} may publish ${limit} requests a second: try again in a second`, {
        ...reset,
        "Burst-RateLimit-Remaining": "0",
      });
    }
    this.seconds.set(project, { second, count: count + 1 });
  }

  private async countMessages(project: string, messages: number, limit: number): Promise<void> {
    const [row] = await this.sql<{ raised: boolean }[]>`
      with raised as (
        insert into dispatch.project_usage as u (project, day, messages)
        select ${project}, (now() at time zone 'utc')::date, ${messages}::int where ${messages}::int <= ${limit}::int
        on conflict (project, day) do update set messages = u.messages + excluded.messages
        where u.messages + excluded.messages <= ${limit}::int
        returning messages)
      select exists (select 1 from raised) as raised`;
    if (row?.raised) return;
    const [today] = await this.sql<{ used: number }[]>`
      select coalesce((select messages from dispatch.project_usage where project = ${project} and day = (now() at time zone 'utc')::date), 0) as used`;
    const remaining = Math.max(0, limit - (today?.used ?? 0));
    throw new AppError(429, `project ${project} may publish ${limit} messages a day (UTC): ${remaining} left today, this request makes ${messages}`, {
      "RateLimit-Limit": String(limit),
      "RateLimit-Remaining": String(remaining),
      "RateLimit-Reset": String(nextUtcMidnight(this.now())),
    });
  }
}

/** The unix time (seconds) of the next UTC midnight after `ms`. */
const nextUtcMidnight = (ms: number) => Math.floor(ms / 86_400_000 + 1) * 86_400;

async function readQuota(sql: Sql, project: string): Promise<Quota> {
  const [row] = await sql<Quota[]>`
    select messages_per_day as "messagesPerDay", publishes_per_second as "publishesPerSecond" from dispatch.projects where name = ${project}`;
  return row ?? { messagesPerDay: null, publishesPerSecond: null };
}

/** A quota as given (the command's option, the API's parameter `name`): a whole number, 0 for none (null); else a 400. */
export function parseQuotaLimit(text: string, name: string): number | null {
  if (!/^\d{1,9}$/.test(text)) throw badRequest(`${name} takes a whole number (0: none), got ${JSON.stringify(text)}`);
  return Number(text) === 0 ? null : Number(text);
}

/** Sets (or, with null, removes) `project`'s quotas; a 404 for an unknown project. */
export async function setQuota(sql: Sql, project: string, quota: Partial<Quota>): Promise<void> {
  const [row] = await sql`
    update dispatch.projects set
      messages_per_day = case when ${quota.messagesPerDay !== undefined} then ${quota.messagesPerDay ?? null}::int else messages_per_day end,
      publishes_per_second = case when ${quota.publishesPerSecond !== undefined} then ${quota.publishesPerSecond ?? null}::int else publishes_per_second end
    where name = ${project} returning name`;
  if (!row) throw new AppError(404, `no project is named ${JSON.stringify(project)} (dispatch project list shows them)`);
}

/** A project's quotas and today's use of its daily one, for the dashboard. */
export async function quotaUse(sql: Tx, project: string): Promise<Quota & { messagesToday: number }> {
  const [row] = await sql<(Quota & { messagesToday: number })[]>`
    select p.messages_per_day as "messagesPerDay", p.publishes_per_second as "publishesPerSecond",
      coalesce(u.messages, 0) as "messagesToday"
    from dispatch.projects p
      left join dispatch.project_usage u on u.project = p.name and u.day = (now() at time zone 'utc')::date
    where p.name = ${project}`;
  return row ?? { messagesPerDay: null, publishesPerSecond: null, messagesToday: 0 };
}
