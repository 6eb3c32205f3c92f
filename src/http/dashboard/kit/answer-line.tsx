/**
 * An attempt's answer in one line, as lists show it: the status, then the
 * first line of the response body (the receiver's own words) or, without a
 * body, of the error; the title holds more of both.
 */
import type { FC } from "hono/jsx";
import type { LastAnswer } from "../../../domain/messages/attempts";

/** Characters of the first line a list shows. */
const LINE = 120;
/** Characters the title holds. */
const MORE = 1000;

/** The line shown and the text of its title; null when there is nothing to say. */
export function answerText(answer: Pick<LastAnswer, "body" | "error">): { line: string; more: string } | null {
  const body = answer.body === null ? "" : printable(answer.body.toString("utf8"));
  const error = printable(answer.error ?? "");
  const first = (body === "" ? error : body).split("\n").map((line) => line.trim()).find((line) => line !== "");
  if (first === undefined) return null;
  const line = first.length > LINE ? `${first.slice(0, LINE)}…` : first;
  const more = [body, error].filter((text) => text !== "").join("\n\n");
  return { line, more: more.length > MORE ? `${more.slice(0, MORE)}…` : more };
}

/** Control characters (but newlines and tabs) as spaces: a body may hold anything. */
const printable = (text: string) => text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ").trim();

/** `HTTP 500`, or "no response" (a network error, a timeout). */
export const StatusText: FC<{ status: number | null }> = ({ status }) =>
  status === null ? <span class="muted status">no response</span> : <span class="mono status">HTTP {status}</span>;

/** The first line of an answer, its title holding more, in red when the attempt was an error; nothing when it said nothing. */
export const AnswerLine: FC<{ answer: Pick<LastAnswer, "body" | "error"> }> = ({ answer }) => {
  const text = answerText(answer);
  return text === null ? null : (
    <div class={answer.error === null ? "answer mono" : "answer mono bad"} title={text.more}>
      {text.line}
    </div>
  );
};
