// What the `queueworks` sub-commands (listen, trigger) parse alike: their options (a parse error is
// exit 2 with the usage), --help (the usage, exit 0), and the positionals after the sub-command's
// own name, which bin/queueworks.mjs passes and `npm run <command> --` does not.
import { parseArgs, type ParseArgsConfig } from 'node:util'

type Options = NonNullable<ParseArgsConfig['options']>

export function parseCommandLine<T extends Options>(opts: {
  command: string
  argv?: string[]
  options: T
  usage: () => string
  fail: (code: number, message: string) => never
}) {
  let parsed: ReturnType<typeof parseArgs<{ args: string[] | undefined; allowPositionals: true; options: T }>>
  try {
    parsed = parseArgs({ args: opts.argv, allowPositionals: true, options: opts.options })
  } catch (err) {
    return opts.fail(2, `${(err as Error).message}\n${opts.usage()}`)
  }
  if ((parsed.values as Record<string, unknown>).help) {
    process.stdout.write(`${opts.usage()}\n`)
    process.exit(0)
  }
  const { positionals } = parsed
  return { values: parsed.values, args: positionals[0] === opts.command ? positionals.slice(1) : positionals }
}
