// placeholder
export function Invoices() {
  return <p>Invoices</p>
}
