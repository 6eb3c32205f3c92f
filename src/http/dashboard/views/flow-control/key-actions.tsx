/**
 * What a full token can do to a flow-control key from its row, as the API's
 * `/v2/flowControl/{key}/…` routes do (domain/flow-control/admin.ts): pause
 * or resume; pin limits (which restarts the rate window, so it asks first);
 * unpin the pinned ones; reset the rate window (which may let held messages
 * start at once, so it asks first). A refused pin is shown again in its row,
 * open, with what was typed and why.
 */
import type { KeyState } from "../../../../domain/flow-control/keys";
import { Action, PauseToggle } from "../../kit/components";
import { canAct, type Viewer } from "../../env";
import type { Refusal } from "../../kit/form";
import { ActionForm, Field } from "../../kit/inputs";

const base = (key: string) => `/dashboard/flow-control/${encodeURIComponent(key)}`;

/** The name of a key's pin form, which a refusal names. */
export const pinFormName = (key: string) => `pin:${key}`;

/** The row's buttons, and its pin form folded away (open when refused). */
export const KeyActions = (props: { state: KeyState; viewer: Viewer; place: Record<string, string>; refusal: Refusal | null }) => {
  const { state: k, viewer, place, refusal } = props;
  if (!canAct(viewer)) return null;
  const refused = refusal?.form === pinFormName(k.key);
  return (
    <div class="key-actions">
      <div class="actions">
        <PauseToggle viewer={viewer} base={base(k.key)} paused={k.paused} fields={place} />
        {k.pinnedParallelism && <Unpin {...props} limit="parallelism" />}
        {k.pinnedRate && <Unpin {...props} limit="rate" />}
        <Action
          viewer={viewer}
          action={`${base(k.key)}/reset-rate`}
          label="Reset rate"
          danger
          confirm={`Reset the rate window of ${k.key}? The deliveries started in this period are forgotten, so held messages may start at once.`}
          fields={place}
        />
      </div>
      <details open={refused}>
        <summary>Pin limits</summary>
        <ActionForm
          viewer={viewer}
          action={`${base(k.key)}/pin`}
          name={pinFormName(k.key)}
          refusal={refusal}
          class="form pin"
          confirm={`Pin these limits on ${k.key}? Later messages no longer change them, and the rate window starts again now.`}
          fields={place}
        >
          <Field name="parallelism" label="Parallelism" size={5} placeholder={k.parallelism?.toString() ?? "none"} inputmode="numeric" />
          <Field name="rate" label="Rate" size={5} placeholder={k.rate?.toString() ?? "none"} inputmode="numeric" />
          <Field name="period" label="Period" size={5} placeholder={`${k.periodMs / 1000}s`} hint="seconds or 1m, 1h" />
          <button type="submit" class="primary">
            Pin
          </button>
        </ActionForm>
      </details>
    </div>
  );
};

/** Unpins one limit: later messages set it again. */
const Unpin = ({ state: k, viewer, place, limit }: { state: KeyState; viewer: Viewer; place: Record<string, string>; limit: "parallelism" | "rate" }) => (
  <Action viewer={viewer} action={`${base(k.key)}/unpin`} label={`Unpin ${limit}`} fields={{ ...place, limit }} />
);
