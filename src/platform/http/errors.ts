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
export const notFound = (msg = 'Not found') => new HttpError(404, msg)
export const conflict = (msg: string) => new HttpError(409, msg)
export const forbidden = (msg: string) => new HttpError(403, msg)
export const unavailable = (msg = 'Service temporarily unavailable, please retry') => new HttpError(503, msg, { 'Retry-After': '5' })
export const tooMany = (msg: string, retryAfterSec: number) =>
  new HttpError(429, msg, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSec))) })
