/**
 * Dispatch's icon, an SVG (an arrow leaving a dark square), linked by the
 * dashboard's pages and the API reference (`<link rel="icon">`) and served
 * with their other hashed assets, so that a browser never asks for a
 * `/favicon.ico` that is not there.
 */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">' +
  '<rect width="32" height="32" rx="7" fill="#1c2430"/>' +
  '<path d="M7 16h15m-6-7 7 7-7 7" fill="none" stroke="#fff" stroke-width="3.2" stroke-linecap="round" stroke-linejoin="round"/>' +
  "</svg>";

/** The icon's content type. */
export const FAVICON_TYPE = "image/svg+xml";
