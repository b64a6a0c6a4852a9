// Structured JSON logs. Secrets and bodies are never logged: redact the usual carriers.
import { pino } from 'pino'

export const logger = pino({
  level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info'),
  base: { pid: process.pid, role: process.env.QW_ROLE },
  redact: {
    paths: ['req.headers.authorization', 'headers.authorization', 'api_key', 'sdk_key', 'secret', '*.api_key', '*.sdk_key'],
    censor: '[redacted]',
  },
})

export type Logger = typeof logger
