// placeholder
export function ReadEinvoice() {
  return <p>Read</p>
}
