/** A flow-control key, linked to its row on the flow-control page (from a message's page, and the key's own row's anchor). */
import { linkTo } from "../../kit/params";

/** The id of a key's row on the flow-control page (keys hold only letters, digits, `.`, `_` and `-`). */
export const keyAnchor = (key: string) => `key-${key}`;

/** The key, linked to the flow-control page searched for it, at its row. */
export const KeyLink = ({ name }: { name: string }) => (
  <a class="mono" href={`${linkTo("/dashboard/flow-control", { search: name })}#${keyAnchor(name)}`} data-link="key">
    {name}
  </a>
);
