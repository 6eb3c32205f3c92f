/** The stored message: one row of `dispatch.messages`, as the engine and the API read it. */
import type { MessageRow } from "../../db/message-columns";
import { PENDING_STATES } from "../../db/vocabulary";

export type StoredMessage = MessageRow;

export { MESSAGE_STATES, type MessageState } from "../../db/vocabulary";

/** Whether a message in `state` has not finished: an attempt is due, in flight or waiting for a queue slot. */
export const isPendingState = (state: string) => (PENDING_STATES as readonly string[]).includes(state);
