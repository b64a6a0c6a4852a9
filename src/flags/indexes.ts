// Every index the feature-flag service needs.
import type { IndexSpec } from '../platform/mongo.ts'
import { flagIndexes } from './flag-store.ts'
import { projectIndexes } from './project-store.ts'
import { segmentIndexes } from './segment-store.ts'
import { historyIndexes } from './history-store.ts'
import { deliveryIndexes } from './delivery-store.ts'
import { webhookIndexes } from './webhook-store.ts'

export const flagsServiceIndexes: IndexSpec[] = [...projectIndexes, ...flagIndexes, ...segmentIndexes, ...historyIndexes, ...webhookIndexes, ...deliveryIndexes]
