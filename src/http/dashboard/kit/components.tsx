/** Pieces every page is made of: times, states, tables of headers, bodies, action buttons, paging, live regions. */
import type { Child, FC } from "hono/jsx";
import { relativeTime } from "../../../domain/relative-time";
import { canAct, type Viewer } from "../env";
import { type BodyView, linkTo } from "./params";

/** `2025-01-31 09:30:12 UTC`. */
export const utc = (at: Date | number) => new Date(at).toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");

/**
 * A time, with how long ago (or ahead) it is from `now`, the service's clock.
 * The page holds it in UTC, which the title keeps; the dashboard's script
 * (client.ts) shows it in the browser's zone and keeps the "ago" counting,
 * from the service's clock (`data-now`), in the same words (`relativeTime`).
 */
export const Time: FC<{ at: Date | number | null | undefined; now: number }> = ({ at, now }) =>
  at === null || at === undefined ? (
    <span class="muted">—</span>
  ) : (
    <time datetime={new Date(at).toISOString()} title={utc(at)} data-now={String(now)}>
      <span class="at">{utc(at)}</span> <span class="muted ago">({relativeTime(new Date(at).getTime(), now)})</span>
    </time>
  );

/** `1 endpoint`, `2 endpoints`: a count and the noun in its number (`many` when the plural is not `one` + s). */
export const plural = (count: number, one: string, many = `${one}s`) => `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;

const TONES: Record<string, string> = {
  DELIVERED: "ok", RUN_SUCCESS: "ok", STEP_SUCCESS: "ok", CALLBACK_SUCCESS: "ok",
  FAILED: "bad", RUN_FAILED: "bad", STEP_FAILED: "bad", CALLBACK_FAIL: "bad", ERROR: "bad",
  RETRY: "warn", STEP_RETRY: "warn", CANCELED: "", RUN_CANCELED: "", STEP_CANCELED: "",
  CREATED: "info", RUN_STARTED: "info", STEP_PROGRESS: "info", CALLBACK_INPROGRESS: "info",
  paused: "warn", active: "ok",
  CLOSED: "ok", OPEN: "bad", PROBING: "warn", GAVE_UP: "bad",
};

/** A state as a coloured badge. */
export const Badge: FC<{ state: string }> = ({ state }) => <span class={`badge ${TONES[state] ?? ""}`}>{state}</span>;

/** Headers as a table of names and values. */
export const HeadersTable: FC<{ headers: Record<string, string | string[]> | null | undefined }> = ({ headers }) => {
  const entries = Object.entries(headers ?? {});
  if (entries.length === 0) return <p class="muted">No headers.</p>;
  return (
    <table>
      <tbody>
        {entries.map(([name, value]) => (
          <tr>
            <th class="mono">{name}</th>
            <td class="mono">{Array.isArray(value) ? value.join(", ") : value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
};

/** The view a body reads best in: JSON when it parses, text when it is UTF-8, else hex. */
export function bestView(body: Buffer): BodyView {
  const text = body.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(body)) return "hex";
  try {
    JSON.parse(text);
    return "json";
  } catch {
    return "text";
  }
}

/** At most this much of a body is shown on a page. */
const SHOWN_BYTES = 64 * 1024;

/** A body in `view`: pretty-printed JSON, text, or a hex dump (offset, 16 bytes a line). */
export function renderBody(body: Buffer, view: BodyView): string {
  const shown = body.subarray(0, SHOWN_BYTES);
  const cut = body.length > SHOWN_BYTES ? `\n… ${body.length - SHOWN_BYTES} more bytes not shown` : "";
  if (view === "hex") {
    const lines: string[] = [];
    for (let offset = 0; offset < shown.length; offset += 16) {
      const row = shown.subarray(offset, offset + 16);
      const hex = [...row].map((byte) => byte.toString(16).padStart(2, "0")).join(" ");
      const ascii = [...row].map((byte) => (byte >= 32 && byte < 127 ? String.fromCharCode(byte) : ".")).join("");
      lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
    }
    return lines.join("\n") + cut;
  }
  const text = shown.toString("utf8");
  if (view === "json") {
    try {
      return JSON.stringify(JSON.parse(body.toString("utf8")), null, 2).slice(0, SHOWN_BYTES) + cut;
    } catch {
      return text + cut;
    }
  }
  return text + cut;
}

/** A body with links to its other views (`?<param>=text|json|hex` on `base`). */
export const BodyBlock: FC<{ body: Buffer; view: BodyView | null; link: (view: BodyView) => string; label?: string }> = ({
  body,
  view,
  link,
  label,
}) => {
  const shown = view ?? bestView(body);
  return (
    <div class="body-block">
      <p class="views">
        {label ?? "Body"} ({plural(body.length, "byte")}):{" "}
        {(["json", "text", "hex"] as const).map((v) => (
          <a href={link(v)} class={v === shown ? "here" : ""}>
            {v}
          </a>
        ))}
      </p>
      {body.length === 0 ? <p class="muted">Empty.</p> : <pre data-view={shown}>{renderBody(body, shown)}</pre>}
    </div>
  );
};

/**
 * A button that POSTs to `action` with the session's CSRF token; nothing for a
 * read-only viewer. Red when `danger` (it destroys or gives up something),
 * amber when `caution` (it holds something back, and can be undone), else
 * the page's primary blue. `confirm` asks first (client.ts).
 */
export const Action: FC<{
  viewer: Viewer;
  action: string;
  label: string;
  danger?: boolean;
  caution?: boolean;
  confirm?: string;
  fields?: Record<string, string>;
}> = ({ viewer, action, label, danger, caution, confirm, fields }) =>
  canAct(viewer) ? (
    <form class="inline" method="post" action={action} data-confirm={confirm}>
      <input type="hidden" name="_csrf" value={viewer.csrf} />
      {Object.entries(fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={danger ? "danger" : caution ? "caution" : "primary"}>
        {label}
      </button>
    </form>
  ) : null;

/** Resume when `paused`, else Pause (amber: it holds, it does not destroy): a POST to `<base>/resume` or `<base>/pause`, with `fields`. */
export const PauseToggle: FC<{ viewer: Viewer; base: string; paused: boolean; fields?: Record<string, string> }> = ({
  viewer,
  base,
  paused,
  fields,
}) =>
  paused ? (
    <Action viewer={viewer} action={`${base}/resume`} label="Resume" fields={fields} />
  ) : (
    <Action viewer={viewer} action={`${base}/pause`} label="Pause" caution fields={fields} />
  );

/** What a pager's two links say. */
export interface PagerLabels {
  first: string;
  next: string;
}

/** The labels of a list ordered newest first (the default). */
const BY_TIME: PagerLabels = { first: "« Newest", next: "Older »" };

/** The labels of a list ordered by name or id. */
const BY_NAME: PagerLabels = { first: "« First", next: "Next »" };

/** Rows a page of a list by name or id shows (queues, URL groups, schedules, flow-control keys). */
export const BY_NAME_PAGE_SIZE = 50;

/** A link to the next page when there is one, and back to the first when not on it. */
export const Pager: FC<{ next: string | null; first?: string | null; note?: string; labels?: PagerLabels }> = ({
  next,
  first,
  note,
  labels = BY_TIME,
}) => (
  <div class="pager">
    {first && <a href={first}>{labels.first}</a>}
    {next ? <a href={next} rel="next">{labels.next}</a> : <span class="muted">End of the list.</span>}
    {note && <span class="muted">{note}</span>}
  </div>
);

/**
 * The pager of a list newest first at `path`: "Older »" to the page at `next`
 * (the cursor the page ended at), "« Newest" when the page is not the first
 * (`cursor` set); the filters (`values`) are kept in both.
 */
export const ByTimePager: FC<{ path: string; values: Record<string, string | null>; cursor: string | null; next: string | null; note?: string }> = ({
  path,
  values,
  cursor,
  next,
  note,
}) => (
  <Pager
    next={next === null ? null : linkTo(path, values, { cursor: next })}
    first={cursor === null ? null : linkTo(path, values)}
    note={note}
  />
);

/**
 * The pager of a list by name or id at `path`: "Next »" to the rows after
 * `next` (the page's last key), "« First" when the page is not the first
 * (`after` set); the search or filters (`filters`) are kept in both.
 */
export const ByNamePager: FC<{ path: string; after: string | null; next: string | null; filters?: Record<string, string | null> }> = ({
  path,
  after,
  next,
  filters = {},
}) => (
  <Pager
    labels={BY_NAME}
    next={next === null ? null : linkTo(path, filters, { after: next })}
    first={after === null ? null : linkTo(path, filters)}
  />
);

/**
 * A region that refreshes itself in place: every few seconds htmx fetches
 * `url` and swaps in the element with the same id. `holdWhileChecked` stops
 * the refresh while a checkbox inside is ticked (a selection in progress):
 * the dashboard's script cancels the request (an htmx trigger filter would
 * be evaluated as a string, which the Content-Security-Policy forbids).
 */
export const Live: FC<{ id?: string; url: string; holdWhileChecked?: boolean; children?: Child }> = ({
  id = "live",
  url,
  holdWhileChecked,
  children,
}) => (
  <div
    id={id}
    hx-get={url}
    hx-trigger="every 3s"
    data-hold-while-checked={holdWhileChecked ? "" : undefined}
    hx-select={`#${id}`}
    hx-swap="outerHTML"
  >
    {children}
  </div>
);

/** A label and its value; `false` or null for one that does not apply. */
export type Fact = readonly [string, Child] | false | null;

/** Label/value pairs, those that apply. */
export const Facts: FC<{ items: Fact[] }> = ({ items }) => (
  <dl class="facts">
    {items.filter((item) => item !== false && item !== null).map(([label, value]) => (
      <>
        <dt>{label}</dt>
        <dd>{value}</dd>
      </>
    ))}
  </dl>
);
