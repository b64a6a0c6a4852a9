// A TCP proxy in front of a test server whose connections a test can drop at will (a lost Wi-Fi,
// a load balancer restart): `drop()` destroys every open connection and refuses new ones until
// `restore()`, on the same port.
import net from 'node:net'
import type { AddressInfo } from 'node:net'

export interface TcpProxy {
  url: string
  drop(): Promise<void>
  restore(): Promise<void>
  close(): Promise<void>
}

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target)
  const sockets = new Set<net.Socket>()
  const make = () =>
    net.createServer((client) => {
      const upstream = net.connect(Number(port), hostname)
      sockets.add(client).add(upstream)
      const end = () => {
        client.destroy()
        upstream.destroy()
        sockets.delete(client)
        sockets.delete(upstream)
      }
      client.on('error', end).on('close', end)
      upstream.on('error', end).on('close', end)
      client.pipe(upstream).pipe(client)
    })
  let server = make()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const ownPort = (server.address() as AddressInfo).port
  const stop = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy()
      sockets.clear()
      server.close(() => r())
    })
  return {
    url: `http://127.0.0.1:${ownPort}`,
    drop: stop,
    async restore() {
      server = make()
      await new Promise<void>((r, j) => server.once('error', j).listen(ownPort, '127.0.0.1', r))
    },
    close: stop,
  }
}
