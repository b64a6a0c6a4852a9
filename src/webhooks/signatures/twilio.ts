// Twilio: X-Twilio-Signature = base64 HMAC-SHA1(auth token, URL + each POST form parameter as
// name+value, names sorted). A JSON (or other non-form) request instead carries bodySHA256=<hex
// SHA-256 of the body> in its URL's query, and only the URL is signed. Twilio signs the URL it was
// configured with, which a proxy in front of us may not show: the caller can pass it as `url`.
// Like the twilio library's validateRequest, the URL is also tried with the default port added or
// removed (Twilio signs https URLs both ways). No timestamp is signed.
import { createHash } from 'node:crypto'
import { badRequest } from '../../platform/http/errors.ts'
import { base64Of, header, hmac, same, type SignatureScheme } from './scheme.ts'

/** The URL with its port added (`:443`/`:80`) or removed, keeping every other character as given. */
function portVariants(url: string): string[] {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?(\[[^\]]*\]|[^/?#:]*)(:\d*)?(.*)$/is.exec(url)
  if (!m) return [url]
  const [, scheme, user = '', host, port, rest] = m
  const without = scheme! + user + host + rest
  const withPort = scheme! + user + host + (port ?? (scheme!.toLowerCase() === 'https://' ? ':443' : ':80')) + rest
  return [...new Set([url, without, withPort])]
}

/** Form parameters as the twilio library concatenates them: names sorted, a repeated name's distinct values sorted. */
function formData(body: Buffer): string {
  const params = new Map<string, Set<string>>()
  for (const [k, v] of new URLSearchParams(body.toString('utf8'))) {
    if (!params.has(k)) params.set(k, new Set())
    params.get(k)!.add(v)
  }
  return [...params.keys()]
    .sort()
    .map((k) => [...params.get(k)!].sort().map((v) => k + v).join(''))
    .join('')
}

export const twilio: SignatureScheme = {
  id: 'twilio',
  name: 'Twilio',
  header: 'X-Twilio-Signature',
  tolerance: null,
  check(input) {
    const sig = base64Of(header(input, 'X-Twilio-Signature')?.trim() ?? '', 20)
    if (!sig) throw badRequest('X-Twilio-Signature header is malformed (expected the base64 of 20 bytes)')
    // The default URL comes from the Host header of the /verify request, which need not parse.
    if (!URL.canParse(input.url)) throw badRequest(`the URL Twilio signed cannot be derived (${input.url} is not a URL): pass it as \`url\``)
    const query = new URL(input.url).searchParams
    const bodyHash = query.get('bodySHA256')
    const isForm = /^application\/x-www-form-urlencoded\b/i.test(input.headers['content-type'] ?? '')
    // With bodySHA256 the body is covered by its hash in the URL, not by parameters.
    const params = bodyHash === null && isForm ? formData(input.body) : ''
    const candidates = portVariants(input.url)
    const hit = candidates.find((u) => same(sig, hmac('sha1', input.secret, u, params)))
    const mismatch =
      `signature does not match: wrong auth token, the body was changed, or Twilio signed another URL than ${input.url} ` +
      '(pass the URL configured at Twilio, with its query string, as `url`)'
    if (hit === undefined) return { timestamp: null, signatures: 1, matched: null, signedUrl: input.url, mismatch }
    const actual = createHash('sha256').update(input.body).digest('hex')
    const invalid =
      bodyHash !== null && bodyHash.toLowerCase() !== actual
        ? `signature matches the URL, but the body's SHA-256 (${actual}) is not the bodySHA256 it carries: the body was changed after it was signed`
        : undefined
    return { timestamp: null, signatures: 1, matched: 0, signedUrl: hit, ...(invalid ? { invalid } : {}) }
  },
}
