/**
 * URL groups (topics): a named set of endpoints; a publish to the group fans
 * out to one message per endpoint (docs/hosted-api.md §5).
 */
import type postgres from "postgres";
import type { Tx } from "../../db/client";
import type { DestinationGuard } from "../../outbound/destination-guard";
import { AppError, badRequest, overLimit } from "../errors";
import { checkReachable, parseHttpUrl } from "../http-url";
import { afterKey, keyPageOf, type Page, type PageOf } from "../paging";
import { checkText } from "../storable-text";

/** An endpoint of a group. */
export interface Endpoint {
  name?: string;
  url: string;
}

/** A URL group as the API shows it. */
export interface UrlGroup {
  name: string;
  createdAt: number;
  updatedAt: number;
  endpoints: Endpoint[];
}

const NAME = /^[A-Za-z0-9._-]{1,100}$/;
const MAX_ENDPOINTS = 1000;
/** (group, URL) is the endpoints' primary key, and a btree entry holds at most 2704 bytes. */
const MAX_ENDPOINT_URL_BYTES = 2048;

/** A valid group or endpoint name, or a 400. */
export function checkName(name: string, what: string): string {
  if (!NAME.test(name)) throw badRequest(`invalid ${what} name "${name}": use 1-100 letters, digits, ".", "_" or "-"`);
  return name;
}

/** Whether a publish destination looks like a group name rather than a URL or API. */
export const isGroupName = (destination: string) => NAME.test(destination);

/**
 * Creates the group if missing and adds or renames endpoints (identified by
 * URL); an endpoint at an IP address the guard refuses is a 400.
 */
export async function addEndpoints(tx: Tx, project: string, group: string, endpoints: Endpoint[], guard: DestinationGuard): Promise<void> {
  checkName(group, "URL group");
  if (endpoints.length === 0) throw badRequest("endpoints must list at least one endpoint");
  for (const endpoint of endpoints) {
    checkReachable(parseHttpUrl(endpoint.url, "endpoint url"), "endpoint url", guard);
    checkText(endpoint.url, "endpoint url", MAX_ENDPOINT_URL_BYTES);
    if (endpoint.name !== undefined && endpoint.name !== "") checkName(endpoint.name, "endpoint");
  }
  // One row per URL: a URL listed twice would make the upsert touch a row twice (a 500).
  const names = new Map<string, string>();
  for (const e of endpoints) names.set(e.url, e.name || names.get(e.url) || "");
  await tx`
    insert into dispatch.url_groups (project, name) values (${project}, ${group})
    on conflict (project, name) do update set updated_at = excluded.updated_at`;
  await tx`
    insert into dispatch.url_group_endpoints (project, group_name, url, name)
    select ${project}, ${group}, url, nullif(name, '')
    from unnest(${[...names.keys()]}::text[], ${[...names.values()]}::text[]) as e(url, name)
    on conflict (project, group_name, url) do update set name = coalesce(excluded.name, dispatch.url_group_endpoints.name)`;
  const [count] = await tx<{ n: number }[]>`
    select count(*)::int as n from dispatch.url_group_endpoints where project = ${project} and group_name = ${group}`;
  if (count!.n > MAX_ENDPOINTS) throw overLimit(`a URL group holds at most ${MAX_ENDPOINTS} endpoints`, null);
}

/**
 * Removes endpoints matching by name or URL; the group is deleted with its
 * last endpoint. Returns 404 for an unknown group.
 */
export async function removeEndpoints(tx: Tx, project: string, group: string, endpoints: Endpoint[]): Promise<void> {
  if (endpoints.some((e) => !e.name && !e.url)) throw badRequest("each endpoint to remove needs a name or a url");
  await requireGroup(tx, project, group);
  await tx`
    delete from dispatch.url_group_endpoints
    where project = ${project} and group_name = ${group}
      and (url = any(${endpoints.flatMap((e) => (e.url ? [e.url] : []))}::text[])
        or name = any(${endpoints.flatMap((e) => (e.name ? [e.name] : []))}::text[]))`;
  await tx`update dispatch.url_groups set updated_at = now() where project = ${project} and name = ${group}`;
  await tx`
    delete from dispatch.url_groups g where project = ${project} and name = ${group}
      and not exists (select 1 from dispatch.url_group_endpoints e where e.project = g.project and e.group_name = g.name)`;
}

/** Lists every group of the project, or the one named (404 when unknown). */
export async function listUrlGroups(tx: Tx, project: string, name?: string): Promise<UrlGroup[]> {
  const groups = await selectUrlGroups(tx, project, name === undefined ? tx`true` : tx`name = ${name}`, tx``);
  if (name !== undefined && groups.length === 0) throw new AppError(404, `URL group ${name} not found`);
  return groups;
}

/** A page of the project's groups in name order: those named after `page.cursor` (a group name), with their endpoints. */
export async function urlGroupPage(tx: Tx, project: string, page: Page): Promise<PageOf<UrlGroup>> {
  const groups = await selectUrlGroups(tx, project, afterKey(tx, page.cursor, tx`name`), tx`limit ${page.count + 1}`);
  return keyPageOf(groups, page.count, (group) => group.name);
}

/**
 * The project's groups `which` picks, by name, each with its endpoints (oldest first).
 * The groups are picked (and limited) first, in name order through their
 * primary key, and only then are their endpoints read, through theirs.
 */
async function selectUrlGroups(tx: Tx, project: string, which: postgres.Fragment, limit: postgres.Fragment): Promise<UrlGroup[]> {
  const rows = await tx<{ name: string; createdAt: Date; updatedAt: Date; endpoints: Endpoint[] }[]>`
    select g.name, g.created_at as "createdAt", g.updated_at as "updatedAt", coalesce(e.endpoints, '[]') as endpoints
    from (
      select project, name, created_at, updated_at from dispatch.url_groups
      where project = ${project} and ${which} order by name ${limit}) g
      left join lateral (
        select json_agg(json_strip_nulls(json_build_object('name', e.name, 'url', e.url)) order by e.created_at, e.url)
          as endpoints
        from dispatch.url_group_endpoints e where e.project = ${project} and e.group_name = g.name) e on true
    order by g.name`;
  return rows.map((row) => ({ ...row, createdAt: row.createdAt.getTime(), updatedAt: row.updatedAt.getTime() }));
}

/**
 * Deletes a group; messages already fanned out are delivered as usual. A
 * name no group has changes nothing (clients delete before they create:
 * docs/hosted-api.md §16 #24).
 */
export async function deleteUrlGroup(tx: Tx, project: string, name: string): Promise<void> {
  await tx`delete from dispatch.url_groups where project = ${project} and name = ${name}`;
}

/** The endpoints a publish of the project to `name` fans out to (404 when the group is unknown). */
export async function groupEndpoints(tx: Tx, project: string, name: string): Promise<Endpoint[]> {
  const [group] = await listUrlGroups(tx, project, name);
  return group!.endpoints;
}

async function requireGroup(tx: Tx, project: string, name: string): Promise<void> {
  const [row] = await tx`select 1 from dispatch.url_groups where project = ${project} and name = ${name} for update`;
  if (!row) throw new AppError(404, `URL group ${name} not found`);
}
