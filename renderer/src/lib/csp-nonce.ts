/**
 * The page's CSP nonce (the server templates it into `<meta property="csp-nonce">`, as Vite's
 * html.cspNonce does). Mantine takes it for its <style> tags; libraries that create <style>
 * elements themselves (xterm's renderer, react-grid-layout) get it stamped on by
 * stampStyleNonces(), so the CSP needs no 'unsafe-inline'.
 */
let cached: string | null | undefined;

export function cspNonce(): string | undefined {
  if (cached === undefined) {
    const meta = globalThis.document?.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]');
    // Browsers hide the nonce attribute from getAttribute once a CSP header is applied; the
    // property keeps it.
    cached = meta?.nonce || meta?.getAttribute('nonce') || null;
  }
  return cached ?? undefined;
}

let stamped = false;

/** Every <style> element created from now on carries the page's nonce. */
export function stampStyleNonces(doc: Document = document): void {
  const nonce = cspNonce();
  if (stamped || !nonce) return;
  stamped = true;
  const original = doc.createElement.bind(doc) as (tag: string, options?: unknown) => HTMLElement;
  doc.createElement = (tag: string, options?: ElementCreationOptions) => {
    const element = original(tag, options);
    if (tag.toLowerCase() === 'style') element.setAttribute('nonce', nonce);
    return element;
  };
}
