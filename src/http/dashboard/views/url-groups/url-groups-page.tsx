/** URL groups by name, 50 a page, and their endpoints; add an endpoint (to a new or existing group), remove one. */
import type { PageOf } from "../../../../domain/paging";
import type { UrlGroup } from "../../../../domain/url-groups/url-groups";
import { Action, ByNamePager, Live } from "../../components";
import { canAct, type Viewer } from "../../env";
import { linkTo, placeFields } from "../../params";

export const URL_GROUPS_PATH = "/dashboard/url-groups";

/** The page of URL groups after `after` (null: the first page). */
export const UrlGroupsPage = ({ page, after, viewer }: { page: PageOf<UrlGroup>; after: string | null; viewer: Viewer }) => {
  // A removal on this page comes back to it.
  const place = placeFields({ after, search: null });
  return (
    <>
      <h1>URL groups</h1>
      <AddEndpoint viewer={viewer} />
      <Live url={linkTo(URL_GROUPS_PATH, { after })}>
        {page.items.length === 0 && <p class="muted">No URL groups yet.</p>}
        {page.items.map((group) => (
          <GroupSection group={group} viewer={viewer} place={place} />
        ))}
        <ByNamePager path={URL_GROUPS_PATH} after={after} next={page.cursor} />
      </Live>
    </>
  );
};

/** A group and its endpoints, each with a button that removes it. */
const GroupSection = ({ group, viewer, place }: { group: UrlGroup; viewer: Viewer; place: Record<string, string> }) => (
  <section class="card" id={group.name} data-url-group={group.name}>
    <h2>
      <a href={`/dashboard/messages?topicName=${encodeURIComponent(group.name)}`}>{group.name}</a>{" "}
      <span class="muted">({group.endpoints.length} endpoints)</span>
    </h2>
    <table>
      <tbody>
        {group.endpoints.map((endpoint) => (
          <tr>
            <td class="url">{endpoint.url}</td>
            <td>{endpoint.name ?? <span class="muted">no name</span>}</td>
            <td>
              <Action
                viewer={viewer}
                action={`${URL_GROUPS_PATH}/endpoints/remove`}
                fields={{ group: group.name, url: endpoint.url, ...place }}
                label="Remove"
                danger
                confirm={`Remove ${endpoint.url} from ${group.name}?`}
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </section>
);

const AddEndpoint = ({ viewer }: { viewer: Viewer }) =>
  canAct(viewer) ? (
    <form class="filters card" method="post" action={`${URL_GROUPS_PATH}/endpoints/add`}>
      <input type="hidden" name="_csrf" value={viewer.csrf} />
      <label>
        URL group (new or existing)
        <input name="group" required size={16} />
      </label>
      <label>
        Endpoint URL
        <input name="url" required size={40} placeholder="https://…" />
      </label>
      <label>
        Endpoint name (optional)
        <input name="name" size={12} />
      </label>
      <button type="submit" class="primary">
        Add endpoint
      </button>
    </form>
  ) : null;
