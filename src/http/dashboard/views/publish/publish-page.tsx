/**
 * The publish page: a message to a URL or a URL group, optionally through a
 * queue, in the dialect chosen (dialect-choice.tsx), with the options of
 * `POST /v2/publish` as fields; an option header line sets any other
 * (request.ts).
 */
import type { Dialect } from "../../../../db/vocabulary";
import { METHODS } from "../../../../domain/publish/options";
import type { Viewer } from "../../env";
import type { Refusal } from "../../kit/form";
import { ActionForm, Choice, Field, Suggestions, TextArea } from "../../kit/inputs";
import { DialectChoice } from "./dialect-choice";

export const PUBLISH_PATH = "/dashboard/publish";

/** Names the destination and queue fields suggest. */
export interface Known {
  urlGroups: string[];
  queues: string[];
}

/** The methods a message may be delivered with, for a choice. */
export const METHOD_OPTIONS = METHODS.map((method) => [method, method] as const);

/** The publish form, in the deployment's `dialect` unless another is chosen; `refusal` when the last try was refused. */
export const PublishPage = (props: { viewer: Viewer; known: Known; dialect: Dialect; refusal: Refusal | null }) => {
  const { viewer, known, dialect, refusal } = props;
  return (
  <>
    <h1>Publish a message</h1>
    <p class="muted">
      What <code>POST /v2/publish/&lt;destination&gt;</code> does (<code>/v2/enqueue/&lt;queue&gt;/…</code> with a queue): the
      message is stored and delivered later, with retries. Also here: <a href={`${PUBLISH_PATH}/event`}>notify a workflow event</a>.
    </p>
    {viewer.role !== "full" && <p class="muted">This session is read-only: publishing needs a full token.</p>}
    <ActionForm viewer={viewer} action={PUBLISH_PATH} name="publish" refusal={refusal} class="card form">
      <fieldset>
        <legend>Where</legend>
        <Field name="destination" label="Destination" hint="an http(s) URL, or a URL group's name" size={48} required list="url-groups" />
        <Field name="queue" label="Queue (optional)" hint="delivered in order, at most its parallelism at once" size={16} list="queues" />
        <Choice name="method" label="Method" options={METHOD_OPTIONS} value="POST" />
        <DialectChoice deployment={dialect} />
      </fieldset>
      <fieldset>
        <legend>What</legend>
        <Field name="contentType" label="Content-Type" hint="e.g. application/json; none when empty" size={24} list="content-types" />
        <TextArea
          name="headers"
          label="Headers, one a line"
          rows={4}
          placeholder={"X-Tenant: 42"}
          hint="Name: value, delivered as given; an Upstash- (or Svc-) line sets any other publish option (Upstash-Timeout: 30s, Upstash-Label: billing)"
        />
        <TextArea name="body" label="Body" rows={8} hint="sent as typed (UTF-8)" />
      </fieldset>
      <fieldset>
        <legend>Delivery</legend>
        <Field name="delay" label="Delay" hint="before the first attempt: 10s, 5m, 2h, 1d" size={8} />
        <Field name="retries" label="Retries" hint="after the first attempt" size={6} inputmode="numeric" />
        <Field name="callback" label="Callback URL" hint="called with the destination's answer" size={32} />
        <Field name="failureCallback" label="Failure callback URL" hint="called when every attempt failed" size={32} />
        <Field name="deduplicationId" label="Deduplication id" hint="a later message with the same id is dropped (for 10 min by default)" size={16} />
      </fieldset>
      <FlowControlFields />
      <button type="submit" class="primary">
        Publish
      </button>
    </ActionForm>
    <Suggestions id="url-groups" names={known.urlGroups} />
    <Suggestions id="queues" names={known.queues} />
    <Suggestions id="content-types" names={CONTENT_TYPES} />
  </>
  );
};

/** Content types the Content-Type fields suggest. */
export const CONTENT_TYPES = ["application/json", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "application/octet-stream"];

/** The flow-control key and its limits (`Svc-Flow-Control-Key` and `-Value`). */
const FlowControlFields = () => (
  <fieldset>
    <legend>Flow control</legend>
    <Field name="flowControlKey" label="Key" hint="messages with a key share its limits" size={16} />
    <Field name="rate" label="Rate" hint="starts per period" size={6} inputmode="numeric" />
    <Field name="period" label="Period" hint="1s (default) to 7d" size={6} />
    <Field name="parallelism" label="Parallelism" hint="in flight at once" size={6} inputmode="numeric" />
  </fieldset>
);
