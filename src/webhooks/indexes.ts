// Every index the webhook-capture service needs.
import type { IndexSpec } from '../platform/mongo.ts'
import { captureIndexes } from './captures.ts'
import { endpointIndexes } from './endpoints.ts'
import { limitIndexes } from './limits.ts'
import { replayIndexes } from './replays.ts'
import { recoveryIndexes } from './recover.ts'
import { searchIndexes } from './search.ts'

export const webhooksServiceIndexes: IndexSpec[] = [endpointIndexes, ...captureIndexes, limitIndexes, replayIndexes, searchIndexes, recoveryIndexes]
