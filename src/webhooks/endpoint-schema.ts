// Request schemas of the webhook-capture management API (endpoint-routes.ts). Tokens are not validated
// here: an unknown or malformed token is simply not found (404).
import { z } from 'zod'
import { fieldMessage } from '../platform/http/validate.ts'
import { searchFields } from './search/search.ts'
import { SCHEMES } from './signatures/index.ts'

const headerValue = /^[\t\x20-\x7e]*$/


/** An endpoint's settings, each optional: what create takes, and what PATCH changes. */
const settingFields = {
  name: z.string().trim().max(200).nullable().optional(),
  response_code: z.number().int({ error: (i) => (i.code === 'invalid_type' && typeof i.input === 'number' ? 'response_code must be an integer' : undefined) }).min(200).max(599).optional(),
  response_body: z.string().max(65_536).optional(),
  response_content_type: z
    .string()
    .min(1)
    .max(255)
    .regex(headerValue, { error: 'response_content_type must be printable ASCII (it is sent as a header)' })
    .optional(),
  forward_url: z.string().max(2_048).nullable().optional(),
}

export const ENDPOINT_SETTINGS = Object.keys(settingFields) as (keyof typeof settingFields)[]

export const createEndpointSchema = z.object({
  body: z.object(settingFields).strict(),
})

const tokenParams = z.object({ token: z.string() })
const requestParams = z.object({ token: z.string(), id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) })

export const endpointSchema = z.object({ params: tokenParams })

/** PATCH …/endpoints/{token}: the fields of create, at least one of them. */
export const updateEndpointSchema = z.object({
  params: tokenParams,
  body: z
    .object(settingFields)
    .strict()
    .refine((b) => Object.keys(b).length > 0, { error: `body must name at least one of: ${ENDPOINT_SETTINGS.join(', ')}` }),
})

export const listRequestsSchema = z.object({
  params: tokenParams,
  query: z.object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    /** Cursor: only requests with a smaller id (older). */
    before: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    /** Only requests with a larger id (newer): what the inspection page polls with. */
    after: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    /** Search filters (search.ts). */
    ...searchFields,
  }),
})

export const requestSchema = z.object({ params: requestParams })

export const replaySchema = z.object({
  params: requestParams,
  body: z.object({ url: z.string().min(1).max(2_048) }),
})

export const verifySchema = z.object({
  params: requestParams,
  body: z.object({
    secret: z
      .string()
      .min(1)
      .max(1_000)
      .describe(
        "What the sender signs with: the shared secret (signing secret, auth token, signature key, whsec_… secret), or for discord the application's public key (64 hex digits) and for sendgrid the verification key (base64 or PEM).",
      ),
    scheme: z
      .enum(SCHEMES)
      .optional()
      .describe('The sender to check as; by default it is detected from the signature header the request carries.'),
    url: z
      .string()
      .min(1)
      .max(2_048)
      .refine((u) => /^https?:\/\//i.test(u) && URL.canParse(u), { error: fieldMessage('must be an absolute http(s) URL') })
      .optional()
      .describe(
        'For twilio and square, which sign the URL they call: that URL exactly as configured at the sender (with its query string). Defaults to the capture URL as this service sees it, which differs behind a proxy that rewrites host or path. Other schemes ignore it.',
      ),
  }),
})
