import { safeUrl } from '../safe-url';
import { hueOf, initialOf } from './hue';

/** An agent's or service's logo, only from an https (or loopback http) URL; else its initial in a colour of its own (stable per name). */
export function Logo({ url, name }: { url: string | null | undefined; name: string }) {
  const src = safeUrl(url);
  if (src === undefined)
    return (
      <span className={`logo placeholder hue-${hueOf(name)}`} aria-hidden="true">
        {initialOf(name)}
      </span>
    );
  return <img className="logo" src={src} alt="" width={40} height={40} referrerPolicy="no-referrer" />;
}
