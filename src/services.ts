// Every service the platform runs (their apps, ports and the queues their requests wait on). What
// they keep in MongoDB is listed in collections.ts.
import type { ServiceDef } from './platform/service.ts'
import { invoiceService } from './invoice/service.ts'
import { flagsService } from './flags/service.ts'
import { webhooksService } from './webhooks/service.ts'

export const SERVICES: ServiceDef[] = [invoiceService, flagsService, webhooksService]

export function serviceByName(name: string): ServiceDef {
  const s = SERVICES.find((x) => x.name === name)
  if (!s) throw new Error(`unknown service "${name}" (known: ${SERVICES.map((x) => x.name).join(', ')})`)
  return s
}
