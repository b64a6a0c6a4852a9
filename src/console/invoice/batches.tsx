// placeholder
export function Batches() {
  return <p>Batches</p>
}
export function BatchPage(_: { id: string }) {
  return <p>Batch</p>
}
