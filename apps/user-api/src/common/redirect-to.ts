/** What a `@Redirect()` handler returns: Nest answers `statusCode` with `Location: url`. */
export interface RedirectTo {
  url: string;
  statusCode: number;
}
