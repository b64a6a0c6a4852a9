// The OpenFeature web SDK and OFREP web provider for browser tests: bundled with esbuild into one
// script, served with a blank page from its own port of 127.0.0.1 (another origin than the service).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The SDK and provider as one script that puts them on window (what a page's bundler would do). */
export async function bundleSdk(): Promise<string> {
  const out = await build({
    stdin: {
      contents: `
        import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk'
        import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
        Object.assign(window, { OpenFeature, ProviderEvents, OFREPWebProvider })`,
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  })
  return out.outputFiles[0]!.text
}

/** A static site on its own port: the page and the bundle. */
export async function serveSite(bundle: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/sdk.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' })
      res.end(bundle)
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><meta charset="utf-8"><title>flags</title><script src="/sdk.js"></script><p>app</p>')
    }
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}
