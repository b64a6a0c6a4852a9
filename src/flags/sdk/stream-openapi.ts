// The OpenAPI description of GET /ofrep/v1/stream (stream-routes.ts): its `text/event-stream`
// answer and events, which the route's code alone does not tell /openapi.json.
import { eventStreamResponse } from '../../platform/ops/openapi.ts'

const data = (type: string) => ({
  type: 'object',
  properties: { type: { const: type }, etag: { type: 'string', description: 'The flag set version, as OFREP bulk evaluation answers it in ETag.' } },
  required: ['type', 'etag'],
})

export const FLAG_STREAM_OPENAPI = {
  tags: ['flags'],
  summary: "Change stream of an SDK key's flags (Server-Sent Events, OFREP event streams)",
  description:
    "Opens a Server-Sent Events stream for the SDK key's environment: a `refetchEvaluation` message within 1 s of any " +
    'change, after a `connected` message on a first connection. Authenticate with `Authorization: Bearer <sdk_key>` or, ' +
    'for browsers, `?sdk_key=`. Reconnect with `Last-Event-ID` to learn whether anything changed meanwhile. A refusal ' +
    '(401, 429 at the open-stream limit) is a JSON answer, never a stream.',
  parameters: [
    { name: 'sdk_key', in: 'query', required: false, description: 'The SDK key, where a header cannot be set (EventSource).', schema: { type: 'string' } },
    { name: 'Last-Event-ID', in: 'header', required: false, description: 'The id of the last event received.', schema: { type: 'string' } },
  ],
  security: [{ bearer: [] }],
  responses: {
    '200': eventStreamResponse('The event stream.', [
      { event: 'message', id: 'The flag set version (etag).', description: 'First event of a new connection: the current version (`type: connected`).', data: data('connected') },
      { event: 'message', id: 'The flag set version (etag).', description: 'The flags changed: evaluate again (`type: refetchEvaluation`).', data: data('refetchEvaluation') },
    ]),
    '401': { description: 'Missing or unknown SDK key.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    '429': { description: "The account's open-stream limit is reached.", content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  },
}
