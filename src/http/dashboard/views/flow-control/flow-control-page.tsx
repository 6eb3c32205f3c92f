/**
 * Flow-control keys: limits, what counts against them, the wait list, pins;
 * pause and resume. Keys by name, 50 a page; a search narrows them, and its
 * pages page within the matches.
 */
import type { KeyState } from "../../../../domain/flow-control/keys";
import type { PageOf } from "../../../../domain/paging";
import { Badge, ByNamePager, Live, PauseToggle } from "../../components";
import type { Viewer } from "../../env";
import { linkTo, placeFields } from "../../params";

export const FLOW_CONTROL_PATH = "/dashboard/flow-control";

/** The page of keys containing `search` (every key when empty) after `after` (null: the first page). */
export const FlowControlPage = (props: { page: PageOf<KeyState>; search: string; after: string | null; viewer: Viewer }) => {
  const { page, search, after, viewer } = props;
  // An action on this page comes back to it, search included.
  const place = placeFields({ after, search });
  return (
    <>
      <h1>Flow-control keys</h1>
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
                <KeyRow state={key} viewer={viewer} place={place} />
              ))}
            </tbody>
          </table>
        )}
        <ByNamePager path={FLOW_CONTROL_PATH} after={after} next={page.cursor} search={search} />
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

const KeyRow = ({ state: k, viewer, place }: { state: KeyState; viewer: Viewer; place: Record<string, string> }) => (
  <tr data-flow-control-key={k.key}>
    <td class="mono">{k.key}</td>
    <td>
      <Badge state={k.paused ? "paused" : "active"} />
      {(k.pinnedParallelism || k.pinnedRate) && <span class="muted"> pinned</span>}
    </td>
    <td>{k.waiting.toLocaleString("en-US")}</td>
    <td>
      {k.active} / {limit(k.parallelism)}
    </td>
    <td>
      {k.window.length} / {limit(k.rate)} per {k.periodMs / 1000} s
    </td>
    <td>
      <PauseToggle viewer={viewer} base={`${FLOW_CONTROL_PATH}/${encodeURIComponent(k.key)}`} paused={k.paused} fields={place} />
    </td>
  </tr>
);
