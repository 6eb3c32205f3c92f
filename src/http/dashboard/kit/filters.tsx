/**
 * The lists' filters: reading them from the query, and the pieces of their
 * forms (text fields, a "since" choice, a UTC time range, the buttons).
 */
import type { FC } from "hono/jsx";
import type { MessageFilter, TimeRange } from "../../../domain/messages/filter";
import { messageFilterParams, type Params, singleParam } from "../../query";
import { rangeParams, SINCE } from "./params";

/** A filter form's values by field name, as the query gave them. */
export type FilterValues = Record<string, string | null>;

/** The value of each of `fields` (each given at most once), for the form and the pager's links. */
export const filterValues = (params: Params, fields: readonly string[]): FilterValues =>
  Object.fromEntries(fields.map((name) => [name, singleParam(params, name)]));

/** What the filters of a list of messages (the messages, the DLQ) select. */
export interface MessageListFilter {
  values: FilterValues;
  /** As the API reads it (`messageFilterParams`): a name or label field takes several, comma-separated. */
  filter: MessageFilter;
  range: TimeRange;
}

/** The filters of a list of messages: `fields`' values, the message filter they make and the time window. */
export const messageListFilter = (params: Params, fields: readonly string[], now: number): MessageListFilter => ({
  values: filterValues(params, fields),
  filter: messageFilterParams(params),
  range: rangeParams(params, now),
});

/** A text field: its name, label and width in characters. */
export type TextField = readonly [name: string, label: string, size: number];

export const TextFilters: FC<{ fields: readonly TextField[]; values: FilterValues }> = ({ fields, values }) => (
  <>
    {fields.map(([name, label, size]) => (
      <label>
        {label}
        <input name={name} value={values[name] ?? ""} size={size} />
      </label>
    ))}
  </>
);

/** "Created" (or `label`) within the last 15 minutes, hour, day or week. */
export const SinceFilter: FC<{ label: string; values: FilterValues }> = ({ label, values }) => (
  <label>
    {label}
    <select name="since">
      <option value="">any time</option>
      {Object.keys(SINCE).map((since) => (
        <option value={since} selected={values.since === since}>
          last {since}
        </option>
      ))}
    </select>
  </label>
);

/** Between two UTC times. */
export const RangeFilter: FC<{ values: FilterValues }> = ({ values }) => (
  <>
    <label>
      From (UTC)
      <input type="datetime-local" name="from" value={values.from ?? ""} />
    </label>
    <label>
      To (UTC)
      <input type="datetime-local" name="to" value={values.to ?? ""} />
    </label>
  </>
);

/** Filter, and Clear (back to `clear`, the list unfiltered). */
export const FilterButtons: FC<{ clear: string }> = ({ clear }) => (
  <>
    <button type="submit" class="primary">
      Filter
    </button>
    <a href={clear}>Clear</a>
  </>
);

/** One of `states`, or any. */
export const StateFilter: FC<{ states: readonly string[]; values: FilterValues }> = ({ states, values }) => (
  <label>
    State
    <select name="state">
      <option value="">any</option>
      {states.map((state) => (
        <option value={state} selected={values.state === state}>
          {state}
        </option>
      ))}
    </select>
  </label>
);
