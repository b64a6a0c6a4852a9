// The webhook-capture service as the CLI and tests see it. Its base address is the host root:
// /api/v1 (management), /hook/ (capture) and /inspect/ (page) all hang off it.
import type { ServiceDef } from '../platform/service.ts'
import { captureReplayContract } from './job-contracts.ts'
import { createWebhooksApp } from './app.ts'

export const webhooksService: ServiceDef = {
  name: 'webhooks',
  port: (c) => c.WEBHOOKS_PORT,
  basePath: '',
  createApp: createWebhooksApp,
  awaits: [captureReplayContract.queue],
}
