/**
 * The dashboard's lists ordered by name — queues, URL groups, schedules (by
 * id) and flow-control keys — show 50 rows a page: following the "Next »"
 * links reads every row once, in the database's order of the key, the last
 * page says it is the end, every later page links back to the first, and the
 * live region refreshes the page it is on. The API still lists everything.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { dashboardSession } from "./support/dashboard-session";
import { useDispatch } from "./support/service";

const dispatch = useDispatch({}, { role: "api" });

/** Rows a page shows. */
const PAGE = 50;
/** Rows made of each kind: three pages, the last one short. */
const MADE = 110;

const pad = (n: number) => String(n).padStart(4, "0");
/** 0..count-1, last first: rows are made in the reverse of their key's order, so a list by creation time would differ. */
const descending = (count: number) => Array.from({ length: count }, (_, i) => count - 1 - i);

let cookie: string;
let csrf: string;
beforeAll(async () => {
  ({ cookie, csrf } = await dashboardSession(dispatch.baseUrl));
});

/** A page of a list as the dashboard served it: the path it was read at, its rows' keys, its HTML. */
interface ListPage {
  path: string;
  rows: string[];
  html: string;
}

const unescape = (text: string) =>
  text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** Reads `path` and each page its "Next »" link leads to; a row's key is its `attribute`. */
async function walk(path: string, attribute: string): Promise<ListPage[]> {
  const pages: ListPage[] = [];
  for (let next: string | null = path; next !== null; ) {
    expect(pages.length, `more pages than rows would fill, at ${next}`).toBeLessThan(MADE);
    const response = await fetch(`${dispatch.baseUrl}${next}`, { headers: { cookie } });
    expect([next, response.status]).toEqual([next, 200]);
    const html = await response.text();
    const rows = [...html.matchAll(new RegExp(`${attribute}="([^"]*)"`, "g"))].map((match) => unescape(match[1]!));
    pages.push({ path: next, rows, html });
    const link = /<a href="([^"]*)" rel="next">([^<]*)<\/a>/.exec(html);
    if (link) expect(link[2]).toBe("Next »");
    next = link ? unescape(link[1]!) : null;
  }
  return pages;
}

/** The pages hold `all` once each, in order, 50 a page, with links back to `firstPath` and live regions that stay put. */
function expectPaged(pages: ListPage[], all: string[], firstPath: string) {
  expect(all.length).toBeGreaterThan(2 * PAGE);
  const sizes = Array.from({ length: Math.ceil(all.length / PAGE) }, (_, i) => Math.min(PAGE, all.length - i * PAGE));
  expect(pages.map((page) => page.rows.length)).toEqual(sizes);
  expect(pages.flatMap((page) => page.rows)).toEqual(all);
  expect(pages.map((page) => page.html.includes("End of the list."))).toEqual(sizes.map((_, i) => i === sizes.length - 1));
  const backLinks = pages.map((page) => /<a href="([^"]*)">« First<\/a>/.exec(page.html)?.[1] ?? null);
  expect(backLinks.map((link) => link && unescape(link))).toEqual(sizes.map((_, i) => (i === 0 ? null : firstPath)));
  expect(pages.every((page) => !page.html.includes("« Newest") && !page.html.includes("Older »"))).toBe(true);
  const refreshes = pages.map((page) => unescape(/id="live" hx-get="([^"]*)"/.exec(page.html)![1]!));
  expect(refreshes).toEqual(pages.map((page) => page.path));
  expect(refreshes.slice(1).every((url) => url.includes("after="))).toBe(true);
}

/** The keys of a table's rows in the database's order (its collation's, which the pages must follow). */
const keysOf = async (table: string, key: string) =>
  (await dispatch.service.sql.unsafe<Record<string, string>[]>(`select ${key} from dispatch.${table} order by ${key}`)).map(
    (row) => row[key]!,
  );

describe("the dashboard's lists page by name", () => {
  it("queues", async () => {
    for (const i of descending(MADE)) {
      const response = await dispatch.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: `queue-${pad(i)}` }) });
      expect(response.status).toBe(200);
    }
    const all = await keysOf("queues", "name");
    expectPaged(await walk("/dashboard/queues", "data-queue"), all, "/dashboard/queues");
    expect((await (await dispatch.api("/v2/queues")).json()).map((queue: { name: string }) => queue.name)).toEqual(all);
  });

  it("an action on a later page comes back to that page", async () => {
    const all = await keysOf("queues", "name");
    const second = `/dashboard/queues?after=${all[PAGE - 1]}`;
    const target = all[PAGE]!;
    /** Posts the form whose action ends in `/<target>/<verb>` on `path`, with its hidden fields; the redirect's target. */
    const act = async (path: string, verb: "pause" | "resume") => {
      const html = await (await fetch(`${dispatch.baseUrl}${path}`, { headers: { cookie } })).text();
      const form = new RegExp(`<form[^>]*action="/dashboard/queues/${target}/${verb}"[^>]*>(.*?)</form>`, "s").exec(html);
      expect(form, `the ${verb} form of ${target} on ${path}`).not.toBeNull();
      const hidden = [...form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)];
      const fields = new URLSearchParams(hidden.map((m): [string, string] => [m[1]!, unescape(m[2]!)]));
      expect(fields.get("_csrf")).toBe(csrf);
      const response = await fetch(`${dispatch.baseUrl}/dashboard/queues/${target}/${verb}`, {
        method: "POST",
        headers: { cookie, "Content-Type": "application/x-www-form-urlencoded" },
        body: fields,
        redirect: "manual",
      });
      expect(response.status).toBe(303);
      return response.headers.get("location")!;
    };
    const paused = await act(second, "pause");
    expect(paused).toBe(`${second}&done=paused&ref=${target}`);
    const page = await (await fetch(`${dispatch.baseUrl}${paused}`, { headers: { cookie } })).text();
    expect(page).toContain(`Paused: ${target}`);
    expect(page).toContain(`data-queue="${target}"`);
    expect((await (await dispatch.api(`/v2/queues/${target}`)).json()).paused).toBe(true);
    expect(await act(paused, "resume")).toBe(`${second}&done=resumed&ref=${target}`);
    expect((await (await dispatch.api(`/v2/queues/${target}`)).json()).paused).toBe(false);
  });

  it("URL groups, each with its endpoints", async () => {
    for (const i of descending(MADE)) {
      const endpoints = [{ url: `https://example.com/${pad(i)}/a` }, { url: `https://example.com/${pad(i)}/b` }];
      const response = await dispatch.api(`/v2/topics/group-${pad(i)}/endpoints`, { method: "POST", body: JSON.stringify({ endpoints }) });
      expect(response.status).toBe(200);
    }
    const all = await keysOf("url_groups", "name");
    const pages = await walk("/dashboard/url-groups", "data-url-group");
    expectPaged(pages, all, "/dashboard/url-groups");
    for (const page of pages) {
      for (const group of page.rows) {
        const id = group.replace("group-", "");
        expect(page.html).toContain(`https://example.com/${id}/a`);
        expect(page.html).toContain(`https://example.com/${id}/b`);
      }
    }
    const listed = await (await dispatch.api("/v2/topics")).json();
    expect(listed.map((group: { name: string }) => group.name)).toEqual(all);
    expect(listed.every((group: { endpoints: unknown[] }) => group.endpoints.length === 2)).toBe(true);
  });

  it("schedules, by id", async () => {
    for (const i of descending(MADE)) {
      const response = await dispatch.api(`/v2/schedules/https://example.com/tick/${pad(i)}`, {
        method: "POST",
        headers: { "Svc-Cron": "0 9 * * 1", "Svc-Schedule-Id": `schedule-${pad(i)}` },
      });
      expect(response.status).toBe(200);
    }
    const all = await keysOf("schedules", "id");
    expectPaged(await walk("/dashboard/schedules", "data-schedule"), all, "/dashboard/schedules");
    // The API keeps its order (oldest first) and lists every schedule.
    const listed = (await (await dispatch.api("/v2/schedules")).json()).map((schedule: { scheduleId: string }) => schedule.scheduleId);
    expect(listed).toEqual(descending(MADE).map((i) => `schedule-${pad(i)}`));
  });

  describe("flow-control keys", () => {
    beforeAll(async () => {
      await dispatch.service.sql`
        insert into dispatch.flow_control_keys (key, parallelism)
        select 'tenant-' || lpad(i::text, 4, '0'), 1 from generate_series(0, ${MADE - 1}) i
        union all select 'batch-' || lpad(i::text, 4, '0'), 2 from generate_series(0, 29) i`;
    });

    it("all of them", async () => {
      const all = await keysOf("flow_control_keys", "key");
      expect(all).toHaveLength(MADE + 30);
      expectPaged(await walk("/dashboard/flow-control", "data-flow-control-key"), all, "/dashboard/flow-control");
      expect((await (await dispatch.api("/v2/flowControl")).json()).map((key: { flowControlKey: string }) => key.flowControlKey)).toEqual(all);
    });

    it("those a search matches, paged within the matches", async () => {
      const matches = (await keysOf("flow_control_keys", "key")).filter((key) => key.includes("ant-0"));
      expect(matches).toHaveLength(MADE);
      const pages = await walk("/dashboard/flow-control?search=ANT-0", "data-flow-control-key");
      expectPaged(pages, matches, "/dashboard/flow-control?search=ANT-0");
      expect(pages.slice(1).every((page) => page.path.startsWith("/dashboard/flow-control?search=ANT-0&after="))).toBe(true);
    });
  });
});

describe("the overview's totals", () => {
  /** The overview's stat whose label starts with `label`: its label and figure. */
  const stat = (html: string, label: string) => {
    const match = new RegExp(`data-stat="(${label}[^"]*)"><div class="n">(?:<a href="[^"]*">)?([^<]*)`).exec(html);
    return match && { label: match[1], value: match[2] };
  };

  it("count queues exactly, and flow-control keys up to 10,000 (more show as 10,000+)", async () => {
    await dispatch.service.sql`
      insert into dispatch.flow_control_keys (key, parallelism, paused)
      select 'many-' || lpad(i::text, 5, '0'), 1, i % 2 = 0 from generate_series(0, 20999) i`;
    const html = await (await fetch(`${dispatch.baseUrl}/dashboard`, { headers: { cookie } })).text();
    expect(stat(html, "Queues")).toEqual({ label: "Queues (0 paused)", value: "110" });
    expect(stat(html, "Flow-control keys")).toEqual({ label: "Flow-control keys (10,000+ paused)", value: "10,000+" });
  });
});
