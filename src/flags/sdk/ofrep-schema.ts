// OpenFeature Remote Evaluation Protocol shapes (open-feature/protocol service/openapi.yaml):
// request {context}, success {key, value, reason, variant, metadata}, failure {key, errorCode,
// errorDetails}, bulk {flags: [...]}. A typed flag answers its JSON value; the seed's untyped flag
// answers "true"/"false" as booleans and anything else as a string. The providers compare the
// value's JSON type with the one asked for and report TYPE_MISMATCH themselves.
export { contextOf, evaluateOfrep, ofrepResult, typedValue, type OfrepSuccess } from '../engine/ofrep-result.ts'

export type OfrepErrorCode = 'PARSE_ERROR' | 'TARGETING_KEY_MISSING' | 'INVALID_CONTEXT' | 'GENERAL' | 'FLAG_NOT_FOUND'

export interface OfrepFailure {
  key?: string
  errorCode: OfrepErrorCode
  errorDetails: string
}
