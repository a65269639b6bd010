/** Colours of initials (app.css `.hue-0` … `.hue-7`), each with AA contrast in light and dark. */
export const HUES = 8;

/** A stable colour for a name: the same agent, service or person always gets the same one (FNV-1a of its text). */
export function hueOf(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % HUES;
}

/** The first letter of a name, upper case (a whole character, not half of a surrogate pair); `?` for an empty name. */
export function initialOf(name: string): string {
  const first = Array.from(name.trim())[0];
  return first === undefined ? '?' : first.toUpperCase();
}
