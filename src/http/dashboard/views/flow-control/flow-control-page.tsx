/**
 * Flow-control keys: limits, what counts against them, the wait list, pins,
 * each key's messages; pause and resume, pin and unpin limits, reset the
 * rate window (key-actions.tsx). Keys by name, 50 a page; a search narrows
 * them, and its pages page within the matches.
 */
import type { KeyState } from "../../../../domain/flow-control/keys";
import type { PageOf } from "../../../../domain/paging";
import { Badge, ByNamePager, Live } from "../../kit/components";
import type { Viewer } from "../../env";
import type { Refusal } from "../../kit/form";
import { linkTo, placeFields } from "../../kit/params";
import { keyAnchor } from "./key-link";
import { KeyActions, pinFormName } from "./key-actions";

export const FLOW_CONTROL_PATH = "/dashboard/flow-control";

/** What the page shows: a page of keys, where it is, who looks, and a refused form to show again. */
export interface FlowControlView {
  page: PageOf<KeyState>;
  search: string;
  after: string | null;
  viewer: Viewer;
  refusal: Refusal | null;
}

/** The page of keys containing `search` (every key when empty) after `after` (null: the first page). */
export const FlowControlPage = ({ page, search, after, viewer, refusal }: FlowControlView) => {
  // An action on this page comes back to it, search included.
  const place = placeFields({ after, search });
  return (
    <>
      <h1>Flow-control keys</h1>
      {refusal !== null && !page.items.some((key) => pinFormName(key.key) === refusal.form) && (
        <p class="error" role="alert">
          {refusal.error}
        </p>
      )}
      <SearchForm search={search} />
      <Live url={linkTo(FLOW_CONTROL_PATH, { search, after })}>
        {page.items.length === 0 ? (
          <p class="muted">No flow-control keys{search ? " match" : " yet"}.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Key</th>
                <th>State</th>
                <th>Wait list</th>
                <th>In flight / parallelism</th>
                <th>Started in window / rate</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((key) => (
                <KeyRow state={key} viewer={viewer} place={place} refusal={refusal} />
              ))}
            </tbody>
          </table>
        )}
        <ByNamePager path={FLOW_CONTROL_PATH} after={after} next={page.cursor} filters={{ search }} />
      </Live>
    </>
  );
};

/** "Key contains", ignoring case. */
const SearchForm = ({ search }: { search: string }) => (
  <form class="filters" method="get" action={FLOW_CONTROL_PATH}>
    <label>
      Key contains
      <input name="search" value={search} />
    </label>
    <button type="submit" class="primary">
      Search
    </button>
  </form>
);

const limit = (n: number | null) => (n === null ? "no limit" : String(n));

/** What is pinned, in words; null when nothing is. */
const pins = (k: KeyState) => [k.pinnedParallelism && "parallelism", k.pinnedRate && "rate"].filter(Boolean).join(" and ") || null;

const KeyRow = (props: { state: KeyState; viewer: Viewer; place: Record<string, string>; refusal: Refusal | null }) => {
  const { state: k } = props;
  return (
    <tr id={keyAnchor(k.key)} data-flow-control-key={k.key}>
      <td class="mono">
        {k.key}
        <div>
          <a href={linkTo("/dashboard/messages", { flowControlKey: k.key })} data-link="key-messages">
            its messages
          </a>
        </div>
      </td>
      <td>
        <Badge state={k.paused ? "paused" : "active"} />
        {pins(k) && <div class="muted">pinned: {pins(k)}</div>}
      </td>
      <td>{k.waiting.toLocaleString("en-US")}</td>
      <td>
        {k.active} / {limit(k.parallelism)}
      </td>
      <td>
        {k.window.length} / {limit(k.rate)} per {k.periodMs / 1000} s
      </td>
      <td>
        <KeyActions {...props} />
      </td>
    </tr>
  );
};
