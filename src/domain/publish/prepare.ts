/**
 * Preparing a publish: turning a request (destination, headers, body, queue)
 * into the messages to store — one for a URL or an API, one per endpoint for
 * a URL group — validated, writing nothing (publish.ts stores them); and the
 * builder of every other new message (callbacks, DLQ retries, workflow steps).
 */
import type { Tx } from "../../db/client";
import type { DestinationGuard } from "../../outbound/destination-guard";
import { badRequest } from "../errors";
import { detectDialect } from "../headers/dialect";
import { checkReachable } from "../http-url";
import { newMessageId } from "../ids";
import type { NewMessage, PublishResult } from "../messages/new-message";
import type { MessageOrigin } from "../../db/vocabulary";
import { checkQueueName } from "../queues/queues";
import { groupEndpoints, isGroupName } from "../url-groups/url-groups";
import { deduplicationKey } from "./deduplication";
import { notBeforeMs } from "./not-before";
import { type MessageSettings, parsePublishOptions, type PublishOptions } from "./options";

/** One publish: what the HTTP layer hands over for `/publish`, `/enqueue` and each `/batch` item. */
export interface PublishRequest {
  /** The project publishing: its URL groups and queues are the ones named, and the messages are its. */
  project: string;
  /** Raw destination: an http(s) URL, a URL group name or `api/llm`. */
  destination: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  body: Buffer;
  queueName: string | null;
  callerIp: string | null;
  /** The schedule whose tick this is (schedules/fire.ts). */
  scheduleId?: string;
  /** The trace its messages' attempts join (observability/tracing.ts); none when tracing is off. */
  traceparent?: string | null;
}

/** What publishing needs from configuration. */
export interface PublishSettings extends MessageSettings {
  /** Chat-completions URL that `api/llm` messages go to; null when not configured. */
  llmUrl: string | null;
  /** The SSRF guard: a destination or callback at an IP address it refuses is a 400. */
  guard: DestinationGuard;
}

/** A single result, or one per endpoint for a URL group; an API's result leaves out where it went. */
export type PublishResponse = PublishResult | Omit<PublishResult, "url"> | PublishResult[];

/** The messages of one request; a URL group fans out to several. */
export interface PreparedRequest {
  messages: NewMessage[];
  kind: "url" | "group" | "api";
}

/** Validates a request and builds its messages; reads URL groups but writes nothing. */
export async function prepareMessages(tx: Tx, request: PublishRequest, settings: PublishSettings): Promise<PreparedRequest> {
  const dialect = detectDialect(Object.keys(request.headers), settings.limits.defaultDialect);
  const options = parsePublishOptions(request.headers, dialect, settings.limits);
  for (const target of [options.callback, options.failureCallback]) {
    if (target) checkReachable(target.url, target === options.callback ? "callback" : "failure callback", settings.guard);
  }
  const queueName = request.queueName === null ? null : checkQueueName(request.queueName);
  const provenance = {
    project: request.project,
    origin: "publish" as const,
    sourceMessageId: null,
    callerIp: request.callerIp,
    scheduleId: request.scheduleId ?? null,
    traceparent: request.traceparent ?? null,
  };
  const { destination } = request;
  if (/^https?:\/\//i.test(destination)) {
    return { messages: [buildMessage(options, { url: checkReachable(checkUrl(destination), "destination", settings.guard), queueName }, request.body, provenance)], kind: "url" };
  }
  if (destination === "api/llm") {
    if (settings.llmUrl === null) throw badRequest("api/llm is not configured: set DISPATCH_LLM_BASE_URL");
    if (options.callback === null) throw badRequest("a callback is required when the destination is api/llm");
    const target = { url: settings.llmUrl, api: "llm", queueName };
    return { messages: [buildMessage(options, target, request.body, provenance)], kind: "api" };
  }
  if (isGroupName(destination)) {
    const endpoints = await groupEndpoints(tx, request.project, destination);
    const messages = endpoints.map((endpoint) =>
      buildMessage(
        options,
        { url: endpoint.url, topicName: destination, endpointName: endpoint.name ?? null, queueName },
        request.body,
        provenance,
      ),
    );
    return { messages, kind: "group" };
  }
  throw badRequest(
    destination === ""
      ? "missing destination: use an http(s) URL, a URL group name or api/llm"
      : `invalid destination "${destination}": use a URL starting with http:// or https://, a URL group name or api/llm`,
  );
}

/** An absolute http(s) URL with a host, or a 400. */
function checkUrl(url: string): string {
  try {
    if (new URL(url).hostname !== "") return url;
  } catch {
    // fall through to the error below
  }
  throw badRequest(`invalid destination url "${url}"`);
}

/** Where a message goes. */
export interface Destination {
  url: string;
  topicName?: string | null;
  endpointName?: string | null;
  queueName?: string | null;
  api?: string | null;
}

/** Who or what caused the message, and the project it belongs to. */
export interface Provenance {
  project: string;
  origin: MessageOrigin;
  sourceMessageId: string | null;
  callerIp: string | null;
  scheduleId?: string | null;
  /** The trace its attempts join; null: none (tracing off, or nothing traced caused it). */
  traceparent?: string | null;
}

/** A message ready for `insertMessages`, with a fresh id and its deduplication key. */
export function buildMessage(
  options: PublishOptions,
  destination: Destination,
  body: Buffer,
  provenance: Provenance,
): NewMessage {
  const key = deduplicationKey(
    { url: destination.url, method: options.method, contentType: options.contentType, headers: options.forwardHeaders, body },
    options.deduplicationId,
    options.contentBasedDeduplication,
  );
  return {
    id: newMessageId(),
    project: provenance.project,
    dialect: options.dialect,
    origin: provenance.origin,
    sourceMessageId: provenance.sourceMessageId,
    url: destination.url,
    topicName: destination.topicName ?? null,
    endpointName: destination.endpointName ?? null,
    queueName: destination.queueName ?? null,
    api: destination.api ?? null,
    method: options.method,
    headers: options.forwardHeaders,
    contentType: options.contentType,
    body,
    timeoutMs: options.timeoutMs,
    maxRetries: options.retries,
    retryDelayExpression: options.retryDelayExpression,
    callback: options.callback?.url ?? null,
    callbackHeaders: options.callback?.headers ?? null,
    failureCallback: options.failureCallback?.url ?? null,
    failureCallbackHeaders: options.failureCallback?.headers ?? null,
    deduplicationId: options.deduplicationId,
    deduplicationKey: key,
    labels: options.labels,
    redactFields: options.redactFields,
    scheduleId: provenance.scheduleId ?? null,
    callerIp: provenance.callerIp,
    traceparent: provenance.traceparent ?? null,
    notBeforeMs: notBeforeMs(options.notBefore, options.workflow),
    delayMs: options.delayMs,
    flowControl: options.flowControl,
    workflow: options.workflow,
  };
}
