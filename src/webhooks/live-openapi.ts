// The OpenAPI description of GET …/endpoints/{token}/stream beyond what its zod schema says: the
// `text/event-stream` answer and its five events, so a generated client or an API tool finds the
// stream (the events are written in live-routes.ts and live-hub.ts).
import { eventStreamResponse } from '../platform/ops/openapi.ts'

const capture = {
  type: 'object',
  description: 'The capture as GET …/requests/{id} answers it, without forward attempts; `body` is left out over 64 KiB (GET …/body has it).',
  properties: {
    id: { type: 'integer' },
    method: { type: 'string' },
    path: { type: 'string' },
    query: { type: 'string' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    raw_headers: { type: 'array', items: { type: 'string' } },
    body: { type: 'string' },
    body_encoding: { enum: ['utf8', 'base64'] },
    size_bytes: { type: 'integer' },
    received_at: { type: 'string' },
  },
  required: ['id', 'method', 'path', 'received_at'],
}

export const LIVE_STREAM_OPENAPI = {
  summary: 'Live stream of new captures, delivery changes and endpoint changes (Server-Sent Events)',
  description:
    'Opens a Server-Sent Events stream (`text/event-stream`): one `capture` event per new capture, `forward` when a ' +
    "capture's forwarding state changes, `local_delivery` when the `listen` CLI reports its local answer, `endpoint` when " +
    "the endpoint's settings change (PATCH, forwarding paused or resumed: the endpoint as GET answers it), `endpoint_deleted` " +
    'when it is deleted, after which the stream ends (a reconnect gets 404). Clients ignore event types they do not know. Comment lines ' +
    '(`: ping`) every 20 s keep it open; `retry: 2000`. Reconnect with `Last-Event-ID` (or `?last_event_id=`) to receive ' +
    'every capture after that id first. A refusal (401, 404) is a JSON answer, never a stream.',
  parameters: [{ name: 'Last-Event-ID', in: 'header', required: false, description: 'The id of the last `capture` event received.', schema: { type: 'string', pattern: '^\\d+$' } }],
  responses: {
    '200': eventStreamResponse('The event stream.', [
      { event: 'capture', id: 'The capture id (per endpoint).', description: 'A new capture.', data: capture },
      {
        event: 'forward',
        description: "The capture's forwarding state changed (an attempt was made, it was paused, dead-lettered…).",
        data: { type: 'object', properties: { id: { type: 'integer' }, forward: { type: 'object' }, attempt: { type: 'object' } }, required: ['id', 'forward'] },
      },
      {
        event: 'local_delivery',
        description: 'The `listen` CLI reported what its local target answered.',
        data: { type: 'object', properties: { id: { type: 'integer' }, local_delivery: { type: 'object' } }, required: ['id', 'local_delivery'] },
      },
      {
        event: 'endpoint',
        description: "The endpoint's settings changed (PATCH …/endpoints/{token}, forwarding paused or resumed): the endpoint as GET …/endpoints/{token} answers it after the change.",
        data: {
          type: 'object',
          properties: {
            endpoint_id: { type: 'string' },
            name: { type: ['string', 'null'] },
            response_code: { type: 'integer' },
            response_body: { type: 'string' },
            response_content_type: { type: 'string' },
            forward_url: { type: ['string', 'null'] },
            forward_paused: { type: 'boolean' },
          },
          required: ['endpoint_id', 'name', 'response_code', 'response_body', 'response_content_type', 'forward_url', 'forward_paused'],
        },
      },
      {
        event: 'endpoint_deleted',
        description: 'The endpoint was deleted with its captures; the stream ends after this event.',
        data: {
          type: 'object',
          properties: { endpoint_id: { type: 'string' }, deleted: { const: true }, requests_deleted: { type: 'integer' } },
          required: ['endpoint_id', 'deleted'],
        },
      },
    ]),
  },
}
