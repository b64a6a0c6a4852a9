// Every index the feature-flag service needs.
import type { IndexSpec } from '../platform/store/mongo.ts'
import { flagIndexes } from './store/flag-store.ts'
import { projectIndexes } from './store/project-store.ts'
import { segmentIndexes } from './store/segment-store.ts'
import { historyIndexes } from './changes/history-store.ts'
import { deliveryIndexes } from './changes/change-hook-delivery-store.ts'
import { webhookIndexes } from './changes/change-hook-store.ts'
import { usageIndexes } from './store/usage-store.ts'

export const flagsServiceIndexes: IndexSpec[] = [...projectIndexes, ...flagIndexes, ...segmentIndexes, ...historyIndexes, ...webhookIndexes, ...deliveryIndexes, ...usageIndexes]
