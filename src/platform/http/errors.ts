// Errors a client can see. Everything else becomes a logged 500 without details.
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Extra JSON fields next to `error` (e.g. per-row reports). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message)
  }
}

export const badRequest = (msg: string, extra?: Record<string, unknown>) => new HttpError(400, msg, {}, extra)
/** 401 with the challenge a client should answer (`Bearer`, or Basic for browser prompts). */
export const unauthorized = (msg: string, challenge = 'Bearer') => new HttpError(401, msg, { 'WWW-Authenticate': challenge })
export const payloadTooLarge = (msg = 'Request body too large') => new HttpError(413, msg)
export const unsupportedMediaType = (msg: string) => new HttpError(415, msg)
/** A third party the request depended on failed (502) or did not answer in time (504). */
export const badGateway = (msg: string) => new HttpError(502, msg)
export const gatewayTimeout = (msg: string) => new HttpError(504, msg)
export const notFound = (msg = 'Not found') => new HttpError(404, msg)
export const conflict = (msg: string) => new HttpError(409, msg)
export const forbidden = (msg: string) => new HttpError(403, msg)
export const unavailable = (msg = 'Service temporarily unavailable, please retry', retryAfterSec = 5) =>
  new HttpError(503, msg, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) })
export const tooMany = (msg: string, retryAfterSec: number) =>
  new HttpError(429, msg, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) })
