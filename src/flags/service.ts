// The feature-flag service as the CLI and tests see it.
import { clock } from '../platform/clock.ts'
import type { ServiceDef } from '../platform/service.ts'
import { createFlagsApp } from './app.ts'
import { setEngineClock } from './engine/now.ts'

// The engine's `now` conditions follow the platform clock wherever the service runs.
setEngineClock(() => clock.nowMs())

export const flagsService: ServiceDef = {
  name: 'flags',
  port: (c) => c.FLAGS_PORT,
  // The spec's paths include /api/v1 (and OFREP lives under /ofrep/v1): the base is the host root.
  basePath: '',
  createApp: createFlagsApp,
  awaits: [],
}
