// The OpenAPI description of the capture URL (ANY /hook/{token}[/sub/path][?query]). Capture is a
// plain middleware (it must see every method and sub-path, raw), so there is no router layer or
// zod schema for /openapi.json to read: its operations are written out here, one per method.
import type { DocumentedOperation } from '../platform/ops/openapi.ts'

const token = {
  name: 'token',
  in: 'path',
  required: true,
  description: 'The endpoint token (`endpoint_id`).',
  schema: { type: 'string', pattern: '^[0-9A-Za-z]{1,64}$' },
}

const error = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
})

const configured = {
  description:
    "The endpoint's configured response: status `response_code` (default 200), body `response_body` " +
    '(default `{"ok":true}`) with `response_content_type` (default `application/json`). Served sandboxed ' +
    "(`Content-Security-Policy: sandbox; default-src 'none'`, `X-Content-Type-Options: nosniff`).",
  headers: { 'X-Capture-Id': { description: 'The id the request was stored under (`GET /api/v1/endpoints/{id}/requests/{request_id}`).', schema: { type: 'integer' } } },
  content: { '*/*': { schema: {} } },
}

const SUB_PATHS =
  'Sub-paths (`/hook/{token}/any/path`) and query strings are accepted and stored as `sub_path` and `query`.'

function stored(method: string): DocumentedOperation['operation'] {
  return {
    summary: `Capture a ${method} request`,
    description: `Stores the request byte-exact (method, path, query, headers in arrival order, body up to 25 MiB) before answering with the endpoint's configured response. No authentication. ${SUB_PATHS}`,
    parameters: [token],
    ...(method === 'GET' ? {} : { requestBody: { required: false, description: 'Any bytes of any content type.', content: { '*/*': { schema: {} } } } }),
    responses: {
      '200': configured,
      '404': error('Unknown or expired endpoint (`Endpoint not found`).'),
      '413': error('Body over 25 MiB: nothing stored.'),
      '429': error("The account's daily request limit (UTC day) is reached: nothing stored.", {
        'Retry-After': { description: 'Seconds until the next UTC day.', schema: { type: 'integer' } },
      }),
    },
  }
}

export const CAPTURE_OPERATIONS: DocumentedOperation[] = [
  ...(['get', 'post', 'put', 'patch', 'delete'] as const).map((m) => ({ method: m, path: '/hook/{token}', operation: stored(m.toUpperCase()) })),
  {
    method: 'head',
    path: '/hook/{token}',
    operation: {
      summary: 'Check that a capture URL exists',
      description: `Answered like GET without a body; not stored or counted. ${SUB_PATHS}`,
      parameters: [token],
      responses: { '200': { description: "The configured response's status and headers, no body." }, '404': { description: 'Unknown or expired endpoint.' } },
    },
  },
  {
    method: 'options',
    path: '/hook/{token}',
    operation: {
      summary: 'CORS preflight of a capture URL',
      description: `Answered for browser-sent test requests (any origin, method and headers); not stored or counted. ${SUB_PATHS}`,
      parameters: [token],
      responses: { '204': { description: 'Preflight answer with `Access-Control-Allow-*` headers.' } },
    },
  },
]
