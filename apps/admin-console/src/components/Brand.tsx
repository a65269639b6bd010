/** The product's mark and name at the start of the top bar, and which console this is. */
export function Brand() {
  return (
    <div className="brand">
      <span className="brand-mark" aria-hidden="true" />
      <span>Identity Broker</span>
      <span className="brand-area">Admin console</span>
    </div>
  );
}
