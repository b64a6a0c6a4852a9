// Request schemas of the flag-change webhook API (change-hook-routes.ts) and its delivery log.
import { z } from 'zod'
import { atField } from '../platform/http/validate.ts'
import { projectParams } from './flag-schema.ts'
import { FLAG_EVENT_TYPES } from './changes/change-hook-store.ts'

export const MAX_WEBHOOK_URL = 2_048
export const MAX_WEBHOOK_DESCRIPTION = 200

/** Only a wrong type gets this message; lengths keep the default ones. */
const stringError = (i: { code?: string; input?: unknown }) => (i.code === 'invalid_type' ? atField(i.input === undefined ? 'is required' : 'must be a string') : undefined)
const url = z.string({ error: stringError }).min(1).max(MAX_WEBHOOK_URL)
const environment = z.string({ error: stringError }).min(1).max(32)
const events = z
  .array(z.enum(FLAG_EVENT_TYPES, { error: atField(`must be one of: ${FLAG_EVENT_TYPES.join(', ')}`) }))
  .min(1)
  .max(FLAG_EVENT_TYPES.length)
  .nullable()
const description = z.string().max(MAX_WEBHOOK_DESCRIPTION)

const fields = { url, environment, events, description, enabled: z.boolean() }

export const createWebhookSchema = z.object({
  params: projectParams,
  body: z.strictObject({ url, environment: environment.optional(), events: events.optional(), description: description.optional(), enabled: z.boolean().optional() }),
})

export const updateWebhookSchema = z.object({
  params: projectParams.extend({ webhook: z.string().max(64) }),
  body: z
    .strictObject({
      url: fields.url.optional(),
      environment: fields.environment.optional(),
      events: fields.events.optional(),
      description: fields.description.optional(),
      enabled: fields.enabled.optional(),
    })
    .refine((b) => Object.keys(b).length > 0, { error: 'body must name at least one of: url, environment, events, description, enabled' }),
})

export const webhookPathSchema = z.object({ params: projectParams.extend({ webhook: z.string().max(64) }) })

/** A rotation takes no body: the service makes the secret (a field such as `secret` is a 400, not ignored). */
export const rotateSecretSchema = z.object({ params: projectParams.extend({ webhook: z.string().max(64) }), body: z.strictObject({}).optional() })

/** Cursor of time-ordered ids (history entries, deliveries): only older ones. */
export const cursor = z.string().regex(/^[0-9A-Za-z-]{1,128}$/, { error: atField('must be a next_before value from a previous page') })
export const pageLimit = z.coerce.number().int().min(1).max(200).default(50)

export const listDeliveriesSchema = z.object({
  params: projectParams.extend({ webhook: z.string().max(64) }),
  query: z.object({ limit: pageLimit, before: cursor.optional() }),
})

export const deliveryPathSchema = z.object({ params: projectParams.extend({ webhook: z.string().max(64), delivery: z.string().max(128) }) })
