/** A fake OpenAI-compatible chat-completions provider: a receiver answering one completion. */
import type { Responder } from "./receiver";

/** A chat completion whose assistant message is `content`. */
export function fakeCompletion(content: string, id = "chatcmpl-test") {
  return {
    id,
    object: "chat.completion",
    model: "fake-model",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  };
}

/** Answers every request with `completion` as JSON. */
export const answerWith =
  (completion: unknown): Responder =>
  () => ({ status: 200, headers: { "Content-Type": "application/json" }, body: JSON.stringify(completion) });
