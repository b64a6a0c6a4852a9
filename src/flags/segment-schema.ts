// Request schemas of the segment endpoints: a segment is a name, a description and the conditions
// (the same operators as rules, operators.ts) that a rule referencing it also requires.
import { z } from 'zod'
import { atField } from '../platform/http/validate.ts'
import { conditionSchema, MAX_CONDITIONS, ONLY_DOTS, ONLY_DOTS_MESSAGE, projectParams, segmentNameSchema } from './flag-schema.ts'

const description = z.string().max(500)
const conditions = z.array(conditionSchema).min(1).max(MAX_CONDITIONS)

export const segmentParams = z.object({ id: z.string(), name: z.string() })

export const createSegmentSchema = z.object({
  params: projectParams,
  body: z.strictObject({ name: segmentNameSchema.refine((n) => !ONLY_DOTS.test(n), { error: atField(ONLY_DOTS_MESSAGE) }), description: description.optional(), conditions }),
})

export const updateSegmentSchema = z.object({
  params: segmentParams,
  body: z
    .strictObject({ name: z.string().optional(), description: description.optional(), conditions: conditions.optional() })
    .refine((b) => b.description !== undefined || b.conditions !== undefined || b.name !== undefined, {
      error: 'body must contain at least one of: description, conditions',
    }),
})

export const segmentPathSchema = z.object({ params: segmentParams })
