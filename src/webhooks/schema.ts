// Request schemas of the webhook-capture management API (routes.ts). Tokens are not validated
// here: an unknown or malformed token is simply not found (404).
import { z } from 'zod'
import { searchFields } from './search.ts'
import { SCHEMES } from './verify.ts'

const headerValue = /^[\t\x20-\x7e]*$/


export const createEndpointSchema = z.object({
  body: z
    .object({
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
    })
    .strict(),
})

const tokenParams = z.object({ token: z.string() })
const requestParams = z.object({ token: z.string(), id: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER) })

export const endpointSchema = z.object({ params: tokenParams })

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
    secret: z.string().min(1).max(1_000),
    scheme: z.enum(SCHEMES).optional(),
  }),
})
