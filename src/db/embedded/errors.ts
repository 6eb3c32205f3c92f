/**
 * Why the embedded database could not start, worded for the person running
 * Dispatch: what went wrong and how to fix it. The CLI prints the message
 * alone, without a stack trace.
 */
export class EmbeddedDatabaseError extends Error {}
