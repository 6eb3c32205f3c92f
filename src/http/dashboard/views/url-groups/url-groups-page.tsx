/** URL groups by name, 50 a page, and their endpoints; create a group or add an endpoint, remove one, delete a group. */
import type { PageOf } from "../../../../domain/paging";
import type { UrlGroup } from "../../../../domain/url-groups/url-groups";
import { Action, ByNamePager, Live, plural } from "../../kit/components";
import type { Viewer } from "../../env";
import type { Refusal } from "../../kit/form";
import { ActionForm, Field } from "../../kit/inputs";
import { linkTo, placeFields } from "../../kit/params";

export const URL_GROUPS_PATH = "/dashboard/url-groups";

/** The page of URL groups after `after` (null: the first page); `refusal` when the add form was refused. */
export const UrlGroupsPage = (props: { page: PageOf<UrlGroup>; after: string | null; viewer: Viewer; refusal: Refusal | null }) => {
  const { page, after, viewer, refusal } = props;
  // An action on this page comes back to it.
  const place = placeFields({ after, search: null });
  return (
    <>
      <h1>URL groups</h1>
      <AddEndpoint viewer={viewer} refusal={refusal} />
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

/** A group and its endpoints, each with a button that removes it, and one that deletes the group. */
const GroupSection = ({ group, viewer, place }: { group: UrlGroup; viewer: Viewer; place: Record<string, string> }) => (
  <section class="card" id={group.name} data-url-group={group.name}>
    <div class="card-head">
      <h2>
        <a href={`/dashboard/messages?topicName=${encodeURIComponent(group.name)}`}>{group.name}</a>{" "}
        <span class="muted">({plural(group.endpoints.length, "endpoint")})</span>
      </h2>
      <Action
        viewer={viewer}
        action={`${URL_GROUPS_PATH}/${encodeURIComponent(group.name)}/delete`}
        fields={place}
        label="Delete group"
        danger
        confirm={`Delete URL group ${group.name} and its ${plural(group.endpoints.length, "endpoint")}? Messages already published to it are still delivered.`}
      />
    </div>
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

/** A new group with its first endpoint, or one more endpoint for a group. */
const AddEndpoint = ({ viewer, refusal }: { viewer: Viewer; refusal: Refusal | null }) => (
  <ActionForm viewer={viewer} action={`${URL_GROUPS_PATH}/endpoints/add`} name="add-endpoint" refusal={refusal} class="card form filters">
    <Field name="group" label="URL group (new or existing)" size={16} required />
    <Field name="url" label="Endpoint URL" size={40} required placeholder="https://…" />
    <Field name="name" label="Endpoint name (optional)" size={12} />
    <button type="submit" class="primary">
      Add endpoint
    </button>
  </ActionForm>
);
