import { safeUrl } from '../safe-url';

/** An agent's or service's logo, only from an https (or loopback http) URL; else its initial. */
export function Logo({ url, name }: { url: string | null | undefined; name: string }) {
  const src = safeUrl(url);
  if (src === undefined)
    return (
      <span className="logo placeholder" aria-hidden="true">
        {name.slice(0, 1).toUpperCase()}
      </span>
    );
  return <img className="logo" src={src} alt="" width={40} height={40} referrerPolicy="no-referrer" />;
}
