// The words for a failed call: the API's own message, except when the service could not be
// reached (the shared client's message names the flags service; this console is the webhooks').
import { ApiError } from '../ui/api.ts'

export function say(e: unknown): string {
  if (e instanceof ApiError && (e.status === 0 || e.status === 502 || e.status === 503 || e.status === 504) && !e.body?.error) {
    return 'The webhook service cannot be reached (down or restarting). Retrying…'
  }
  return (e as Error).message
}
