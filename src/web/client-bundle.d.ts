/**
 * The browser client, compiled by `scripts/build.mjs` from `src/web/client/`
 * and inlined into the server bundle as text: the page needs nothing at run
 * time that the one installed file does not carry.
 */
declare module "magi:web-client" {
  /**
   * The page's scripts by the path they are served at: `app.js` (the entry,
   * `src/web/client/main.ts`) and the chunks it imports later
   * (`chunks/<name>-<hash>.js`), bundled and minified.
   */
  export const scripts: Readonly<Record<string, string>>
  /** `src/web/client/styles.css`. */
  export const styles: string
}
