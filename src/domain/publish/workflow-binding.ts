/**
 * The hook through which storing messages binds workflow messages to their
 * runs. Publishing owns it, so that workflows build on publishing and not the
 * other way round; the workflows module installs its binding
 * (`installWorkflowHooks`, workflows/hooks.ts) when the service starts.
 */
import type { Tx } from "../../db/client";
import type { NewMessage } from "../messages/new-message";

/**
 * Binds the workflow messages among `messages` to their runs; returns, for
 * init messages of an already active run, the id of that run's init message.
 */
export type WorkflowBinder = (tx: Tx, messages: NewMessage[]) => Promise<Map<string, string>>;

let binder: WorkflowBinder | null = null;

/** Installs the workflows' binding (once, at start-up). */
export function installWorkflowBinder(bind: WorkflowBinder): void {
  binder = bind;
}

/** Binds through the installed binder; a batch without workflow messages needs none. */
export function bindWorkflowMessages(tx: Tx, messages: NewMessage[]): Promise<Map<string, string>> {
  if (!messages.some((message) => message.workflow !== null)) return Promise.resolve(new Map());
  if (binder === null) throw new Error("workflow messages need the workflow binding: call installWorkflowHooks() at start-up");
  return binder(tx, messages);
}
