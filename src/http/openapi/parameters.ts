/**
 * Parameters and headers several operations share: the message filters, the
 * time window, paging, and the publish headers (domain/publish/option-headers.ts).
 */
import { OPTION_HEADER_FAMILIES, OPTION_HEADERS, type OptionHeader } from "../../domain/publish/option-headers";
import { canonicalHeaderName } from "../../domain/headers/names";
import type { HeaderDoc, ParameterDoc } from "./operation";

const MULTI = "Several values: repeat the parameter or join them with commas.";

/** The message filters of bulk cancel, the DLQ and the logs (domain/messages/filter.ts). */
export const MESSAGE_FILTERS: Record<string, ParameterDoc> = {
  messageId: `Message ids. ${MULTI}`,
  url: "Destination URLs (exact). Repeat the parameter for several.",
  topicName: `URL group names. ${MULTI}`,
  scheduleId: `Schedule ids. ${MULTI}`,
  queueName: `Queue names. ${MULTI}`,
  label: `Labels. ${MULTI}`,
  flowControlKey: `Flow-control keys. ${MULTI}`,
  callerIp: `IP addresses of the publishing clients. ${MULTI}`,
  callerIP: "Alias of callerIp.",
  host: `Destination hosts. ${MULTI}`,
  path: "Destination paths. Repeat the parameter for several.",
  api: `API destinations, e.g. \`llm\` for messages published to \`api/llm\`. ${MULTI}`,
};

/** The message filters but `names`. */
export function messageFiltersExcept(...names: string[]): Record<string, ParameterDoc> {
  return Object.fromEntries(Object.entries(MESSAGE_FILTERS).filter(([name]) => !names.includes(name)));
}

/** An inclusive time window in Unix milliseconds. */
export const TIME_RANGE: Record<string, ParameterDoc> = {
  fromDate: { type: "integer", description: "Only what happened at or after this Unix time in milliseconds." },
  toDate: { type: "integer", description: "Only what happened at or before this Unix time in milliseconds." },
};

/** A page: the cursor of the previous answer and the page size. */
export function paging(defaultCount: number, maxCount: number): Record<string, ParameterDoc> {
  return {
    cursor: "The cursor the previous page answered; the first page when absent.",
    count: { type: "integer", description: `Page size, 1 to ${maxCount} (default ${defaultCount}).` },
  };
}

export const ORDER: Record<string, ParameterDoc> = { order: "`earliestFirst` or `latestFirst`." };

/** The publish headers in the native dialect; each is also accepted with the `Upstash-` prefix. */
export function publishHeaders(except: OptionHeader[] = []): HeaderDoc[] {
  const options = Object.entries(OPTION_HEADERS)
    .filter(([name]) => !except.includes(name as OptionHeader))
    .map(([name, description]) => ({ name: canonicalHeaderName(`svc-${name}`), description }));
  return [{ name: "Content-Type", description: "Stored with the body and sent with every delivery." }, ...options];
}

/** What the operation description says about the publish headers that come by family. */
export const PUBLISH_HEADER_NOTE = [
  "Every `Svc-` header is also accepted as `Upstash-` (the hosted service's dialect; the response headers of a delivery follow the dialect used).",
  ...Object.entries(OPTION_HEADER_FAMILIES).map(([family, description]) => `- \`Svc-${canonicalHeaderName(family)}*\`: ${description}`),
].join("\n");
