/**
 * The message list: filters (state, destination URL, URL group, queue,
 * label, time), newest first, a page at a time (domain/messages/list.ts),
 * refreshed in place.
 */
import { type Context, Hono } from "hono";
import { MESSAGE_STATES, type MessageState } from "../../../domain/messages/message";
import { badRequest } from "../../../domain/errors";
import type { MessageFilter } from "../../../domain/messages/filter";
import { listMessages, type MessageSummary, SCAN_LIMIT } from "../../../domain/messages/list";
import { Badge, Live, Pager, Time, utc } from "../components";
import type { DashboardEnv } from "../env";
import { FilterButtons, type FilterValues, RangeFilter, SinceFilter, StateFilter, TextFilters } from "../filters";
import { Layout } from "../layout";
import { NOTICE_PARAMS, noticeOf } from "../notices";
import { frameOf, nowOf, type PageDeps } from "../page";
import { first, linkTo, pageParams, rangeParams } from "../params";

const FILTERS = ["state", "url", "topicName", "queueName", "label", "since", "from", "to"] as const;
const PAGE_SIZE = 50;

/** `GET /dashboard/messages`. */
export function messageListRoutes(deps: PageDeps) {
  return new Hono<DashboardEnv>().get("/messages", async (c) => {
    const params = pageParams(c, [...FILTERS, "cursor", ...NOTICE_PARAMS]);
    const now = nowOf(deps);
    const state = first(params, "state");
    const filter: MessageFilter = {};
    for (const field of ["url", "topicName", "queueName", "label"] as const) {
      const value = first(params, field);
      if (value !== null) filter[field] = [value];
    }
    const page = await listMessages(deps.sql, {
      states: state === null ? null : [messageState(state)],
      filter,
      range: rangeParams(params, now),
      cursor: first(params, "cursor"),
      count: PAGE_SIZE,
    });
    const values = Object.fromEntries(FILTERS.map((name) => [name, first(params, name)]));
    const self = currentUrl(c);
    return c.html(
      <Layout frame={frameOf(deps, c)} title="Messages" section="messages" notice={noticeOf(c)}>
        <h1>Messages</h1>
        <Filters values={values} />
        <Live url={self}>
          <MessageTable items={page.items} now={now} />
          <Pager
            next={page.cursor === null ? null : linkTo("/dashboard/messages", values, { cursor: page.cursor })}
            first={first(params, "cursor") === null ? null : linkTo("/dashboard/messages", values)}
            note={
              page.searchedTo === null
                ? undefined
                : `This page searched ${SCAN_LIMIT.toLocaleString("en-US")} messages, back to ${utc(page.searchedTo)}; older ones are on the next page.`
            }
          />
        </Live>
      </Layout>,
    );
  });
}

function messageState(text: string): MessageState {
  const upper = text.toUpperCase();
  if (!(MESSAGE_STATES as readonly string[]).includes(upper)) {
    throw badRequest(`state must be one of ${MESSAGE_STATES.join(", ")}, got "${text}"`);
  }
  return upper as MessageState;
}

/** The request's path and query, for the live region to fetch again. */
export const currentUrl = (c: Context) => {
  const url = new URL(c.req.url);
  return url.pathname + url.search;
};

const MESSAGE_FIELDS = [
  ["url", "Destination URL", 32],
  ["topicName", "URL group", 12],
  ["queueName", "Queue", 12],
  ["label", "Label", 12],
] as const;

const Filters = ({ values }: { values: FilterValues }) => (
  <form class="filters" method="get" action="/dashboard/messages">
    <StateFilter states={MESSAGE_STATES} values={values} />
    <TextFilters fields={MESSAGE_FIELDS} values={values} />
    <SinceFilter label="Created" values={values} />
    <RangeFilter values={values} />
    <FilterButtons clear="/dashboard/messages" />
  </form>
);

/** Messages as a table; each links to its page. */
export const MessageTable = ({ items, now }: { items: MessageSummary[]; now: number }) =>
  items.length === 0 ? (
    <p class="muted">No messages match.</p>
  ) : (
    <table class="messages">
      <thead>
        <tr>
          <th>Message</th>
          <th>State</th>
          <th>Destination</th>
          <th>Retries</th>
          <th>Created</th>
          <th>Next attempt / finished</th>
        </tr>
      </thead>
      <tbody>
        {items.map((m) => (
          <tr data-message-id={m.id}>
            <td class="mono">
              <a href={`/dashboard/messages/${encodeURIComponent(m.id)}`}>{m.id}</a>
            </td>
            <td>
              <Badge state={m.state} />
            </td>
            <td class="url">
              {m.url}
              <Origin m={m} />
            </td>
            <td>
              {m.retried} of {m.maxRetries}
            </td>
            <td>
              <Time at={m.createdAt} now={now} />
            </td>
            <td>{m.completedAt === null ? <Time at={m.nextDeliveryAt} now={now} /> : <Time at={m.completedAt} now={now} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );

const Origin = ({ m }: { m: MessageSummary }) => {
  const parts = [
    m.topicName && `URL group ${m.topicName}${m.endpointName ? ` (${m.endpointName})` : ""}`,
    m.queueName && `queue ${m.queueName}`,
    m.scheduleId && `schedule ${m.scheduleId}`,
    m.origin !== "publish" && m.origin.replace("_", " "),
    m.labels && m.labels.length > 0 && `labels ${m.labels.join(", ")}`,
  ].filter(Boolean);
  return parts.length === 0 ? null : <div class="muted">{parts.join(" · ")}</div>;
};
