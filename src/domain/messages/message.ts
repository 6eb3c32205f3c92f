/** The stored message: one row of `dispatch.messages`, as the engine and the API read it. */
import type { MessageRow } from "../../db/message-columns";

export type StoredMessage = MessageRow;

export { MESSAGE_STATES, type MessageState } from "../../db/vocabulary";
