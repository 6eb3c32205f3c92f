/**
 * Why a step failed, as its workflow answered: the error the SDK reports for
 * what the step threw (name, message, and its stack one frame a line;
 * domain/workflows/logs/sdk-error.ts), else the response body — JSON
 * pretty-printed — else what went wrong before an answer. Bodies are shown
 * as stored, saying so when they were cut off at the response size limit or
 * are hidden by the run's `Redact-Fields`.
 */
import type { FC } from "hono/jsx";
import { type SdkError, sdkError } from "../../../../domain/workflows/logs/sdk-error";
import type { StepError } from "../../../../domain/workflows/logs/steps";
import { Time } from "../../kit/components";

/** At most this many characters of a body are shown. */
const SHOWN_CHARS = 20_000;

/** A redacted value as the API shows it (domain/messages/redaction.ts `Redactor.value`). */
const REDACTED = /^REDACTED:[0-9a-f]{64}$/;

/** A failed attempt's answer: its status, body and time; `error` is Dispatch's account of it (no answer, or its status). */
export type FailedAnswer = Pick<StepError, "status" | "body"> & { error?: string; time?: number };

/** The body as stored: JSON pretty-printed, else text; a note when it was cut off at `cutAt` bytes or is hidden. */
export const StoredBody: FC<{ body: string; cutAt?: number }> = ({ body, cutAt }) => {
  const note = bodyNote(body, cutAt);
  return (
    <>
      {note && (
        <p class="muted" data-body-note>
          {note}
        </p>
      )}
      <pre>{shown(body)}</pre>
    </>
  );
};

/** A failed attempt: the SDK's error when the body is one, else the body; the stack open when `open`. */
export const AnswerError: FC<{ answer: FailedAnswer; cutAt: number; now: number; open?: boolean }> = ({ answer, cutAt, now, open }) => {
  const error = sdkError(answer.body);
  return (
    <div class="step-error" data-step-error>
      <div class="error">
        <strong class="error-message">{errorHeadline(answer)}</strong>
        <div class="muted">
          {answer.status > 0 && `HTTP ${answer.status}`}
          {answer.time !== undefined && (
            <>
              {" · "}
              <Time at={answer.time} now={now} />
            </>
          )}
        </div>
      </div>
      {error ? <Stack error={error} open={open} /> : answer.body !== "" && <StoredBody body={answer.body} cutAt={cutAt} />}
    </div>
  );
};

/** The errors of a step's failed attempts: the latest in full, the earlier ones folded away. */
export const StepErrors: FC<{ errors: StepError[] | undefined; cutAt: number; now: number }> = ({ errors, cutAt, now }) => {
  if (errors === undefined || errors.length === 0) return null;
  const latest = errors.at(-1)!;
  const earlier = errors.slice(0, -1).reverse();
  return (
    <div class="step-errors">
      <AnswerError answer={latest} cutAt={cutAt} now={now} open />
      {earlier.length > 0 && (
        <details>
          <summary>
            {earlier.length} earlier failed {earlier.length === 1 ? "attempt" : "attempts"}
          </summary>
          {earlier.map((error) => (
            <AnswerError answer={error} cutAt={cutAt} now={now} />
          ))}
        </details>
      )}
    </div>
  );
};

/** The stack of a thrown error, a frame a line, folded when `open` is not set. */
const Stack: FC<{ error: SdkError; open?: boolean }> = ({ error, open }) =>
  error.stack.length === 0 ? null : (
    <details class="stack" open={open}>
      <summary>Stack trace ({error.stack.length} lines)</summary>
      <ol class="stack">
        {error.stack.map((line) => (
          <li>{line}</li>
        ))}
      </ol>
    </details>
  );

/** A failed attempt in a line: the error the step threw (`Name: message`), else Dispatch's account, else the status. */
export function errorHeadline(answer: FailedAnswer): string {
  const error = sdkError(answer.body);
  if (error) return `${error.name}: ${error.message}`;
  return answer.error || (answer.status > 0 ? `The step answered HTTP ${answer.status}` : "The step failed");
}

/** Why a stored body is not the whole answer, or null. */
function bodyNote(body: string, cutAt: number | undefined): string | null {
  if (REDACTED.test(body)) return "Hidden: the run asks for bodies to be redacted (Redact-Fields); shown is the value's keyed hash.";
  if (cutAt !== undefined && Buffer.byteLength(body) >= cutAt) {
    return `Cut off: only the first ${cutAt.toLocaleString("en-US")} bytes of a response are kept (DISPATCH_MAX_MESSAGE_SIZE).`;
  }
  return null;
}

/** The body pretty-printed when it is JSON, at most `SHOWN_CHARS` of it. */
function shown(body: string): string {
  let text = body;
  try {
    text = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // Not JSON: shown as it is.
  }
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}\n… ${text.length - SHOWN_CHARS} more characters not shown` : text;
}
