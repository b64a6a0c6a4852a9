// Checking a URL a user gives for the platform to call later (capture forwarding, flag-change
// webhooks): http(s), no credentials, a host; and, unless private targets are allowed (local
// development and tests; never with NODE_ENV=production unless OUTBOUND_ALLOW_PRIVATE says so), no
// loopback, private or link-local literal and no `localhost`. Names are resolved and checked again
// at every delivery by the safe fetch, so a name that later resolves to a private address is
// refused then.
import { badRequest } from '../http/errors.ts'
import { checkUrlShape, isPublicAddress, OutboundError } from './safe-fetch.ts'

export function checkOutboundUrl(field: string, raw: string, allowPrivate: boolean): string {
  let url: URL
  try {
    url = checkUrlShape(raw)
  } catch (err) {
    throw badRequest(`${field} ${(err as OutboundError).message.replace(/^URL /, '')}`)
  }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (/^[\d.:a-f]+$/i.test(host) && !isPublicAddress(host)))) {
    throw badRequest(`${field} must point to a public address`)
  }
  return url.href
}
