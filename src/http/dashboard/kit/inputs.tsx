/**
 * The dashboard's action forms and their inputs. An `ActionForm` posts with
 * the session's CSRF token and, when its page is shown again because the
 * domain refused it (form.ts `formAction`), shows the error beside it
 * (`role=alert`) and gives each input inside it the value that was typed:
 * the inputs read it from the form they are in, so a page passes the refusal
 * once, to the form.
 */
import { type Child, createContext, type FC, useContext } from "hono/jsx";
import { canAct, type Viewer } from "../env";
import type { Refusal } from "./form";

/** The values a refused form was submitted with; null when the form is shown fresh. */
const Submitted = createContext<Map<string, string> | null>(null);

/** The value an input shows: what was submitted, when its form was refused, else its default. */
const useValue = (name: string, fallback: string | undefined) => {
  const submitted = useContext(Submitted);
  return submitted === null ? (fallback ?? "") : (submitted.get(name) ?? "");
};

/**
 * A POST form named `name` on its page, for a full token only (nothing for a
 * read-only viewer). `refusal`: the page's refused form, if any; when it is
 * this one, the error is shown at the top and the inputs keep what was typed.
 * `confirm` asks before submitting (client.ts).
 */
export const ActionForm: FC<{
  viewer: Viewer;
  action: string;
  name: string;
  refusal?: Refusal | null;
  title?: string;
  class?: string;
  confirm?: string;
  fields?: Record<string, string>;
  children?: Child;
}> = ({ viewer, action, name, refusal, title, class: className, confirm, fields, children }) => {
  if (!canAct(viewer)) return null;
  const refused = refusal?.form === name ? refusal : null;
  return (
    <form class={className ?? "card form"} method="post" action={action} data-form={name} data-confirm={confirm}>
      {title && <h2>{title}</h2>}
      {refused && (
        <p class="error" role="alert">
          {refused.error}
        </p>
      )}
      <input type="hidden" name="_csrf" value={viewer.csrf} />
      {Object.entries(fields ?? {}).map(([field, value]) => (
        <input type="hidden" name={field} value={value} />
      ))}
      <Submitted.Provider value={refused?.values ?? null}>{children}</Submitted.Provider>
    </form>
  );
};

/** A labelled text input (or `type`) that keeps what was typed. `hint` says what it takes, under the label. */
export const Field: FC<{
  name: string;
  label: string;
  hint?: string;
  value?: string;
  type?: string;
  size?: number;
  required?: boolean;
  placeholder?: string;
  list?: string;
  inputmode?: "numeric" | "text";
}> = ({ name, label, hint, value, ...attributes }) => (
  <label>
    <span>{label}</span>
    <input name={name} value={useValue(name, value)} {...attributes} />
    {hint && <small class="muted">{hint}</small>}
  </label>
);

/** A labelled text area that keeps what was typed. */
export const TextArea: FC<{ name: string; label: string; hint?: string; rows?: number; placeholder?: string }> = ({
  name,
  label,
  hint,
  rows = 4,
  placeholder,
}) => (
  <label class="wide">
    <span>{label}</span>
    {/* A text area drops one newline right after its tag: the first one is that one, the value keeps its own. */}
    <textarea name={name} rows={rows} placeholder={placeholder}>{`\n${useValue(name, "")}`}</textarea>
    {hint && <small class="muted">{hint}</small>}
  </label>
);

/** A labelled choice of `options` (value and text) that keeps what was chosen. */
export const Choice: FC<{ name: string; label: string; options: readonly (readonly [string, string])[]; value?: string }> = ({
  name,
  label,
  options,
  value,
}) => {
  const chosen = useValue(name, value ?? options[0]?.[0]);
  return (
    <label>
      <span>{label}</span>
      <select name={name}>
        {options.map(([option, text]) => (
          <option value={option} selected={option === chosen}>
            {text}
          </option>
        ))}
      </select>
    </label>
  );
};

/** Names for `<datalist>` suggestions, by the list's id. */
export const Suggestions: FC<{ id: string; names: readonly string[] }> = ({ id, names }) => (
  <datalist id={id}>
    {names.map((name) => (
      <option value={name} />
    ))}
  </datalist>
);
