// Where `listen` writes. Normally everything goes to stdout, coloured on a terminal. With --json,
// stdout carries only one JSON object per capture (a line each, for jq and scripts) and every
// message meant for a person goes to stderr, coloured when stderr is a terminal.
import { styleText } from 'node:util'

type Style = Parameters<typeof styleText>[0]

let json = false
const human = () => (json ? process.stderr : process.stdout)
const coloured = () => Boolean(human().isTTY) && !process.env.NO_COLOR

export function jsonMode(on: boolean) {
  json = on
}

export const isJson = () => json

export const paint = (style: Style, s: string) => (coloured() ? styleText(style, s) : s)

/** A message for the person at the terminal (stderr in --json mode). */
export function say(text: string) {
  human().write(text.endsWith('\n') ? text : `${text}\n`)
}

/** One record per capture, on stdout; only in --json mode. */
export function record(r: Record<string, unknown>) {
  process.stdout.write(`${JSON.stringify(r)}\n`)
}

export function fail(code: number, message: string): never {
  process.stderr.write(`${coloured() && process.stderr.isTTY ? styleText('red', 'error:') : 'error:'} ${message}\n`)
  process.exit(code)
}
