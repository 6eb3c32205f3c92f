/**
 * A message about to be stored, and what its publish answers. The stored
 * row's shape is `MessageInsert` (db/queries/insert-messages.ts); a new
 * message adds what storing it decides: its deduplication window and the
 * workflow run it binds to.
 */
import type { MessageInsert } from "../../db/queries/insert-messages";
import type { Dialect, MessageOrigin } from "../../db/vocabulary";
import type { WorkflowBinding } from "../headers/workflow";

/** A message about to be stored (`insertMessages`). */
export type NewMessage = Omit<MessageInsert, "dialect" | "origin" | "labels" | "workflow"> & {
  dialect: Dialect;
  origin: MessageOrigin;
  labels: string[];
  /** Key of the deduplication window this message claims, if any. */
  deduplicationKey: string | null;
  /** The run the message belongs to, as published; bound to a run when stored (`bindWorkflowMessages` sets `workflowRunPk`). */
  workflow: WorkflowBinding | null;
};

/** The publish result of one message (docs/interface.md "Publish result"). */
export interface PublishResult {
  messageId: string;
  url: string;
  deduplicated: boolean;
}
