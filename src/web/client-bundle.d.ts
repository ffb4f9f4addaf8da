/**
 * The browser client, compiled by `scripts/build.mjs` from `src/web/client/`
 * and inlined into the server bundle as text: the page needs nothing at run
 * time that the one installed file does not carry.
 */
declare module "magi:web-client" {
  /** `src/web/client/main.ts`, bundled and minified. */
  export const script: string
  /** `src/web/client/styles.css`. */
  export const styles: string
}
