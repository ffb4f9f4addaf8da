/**
 * `@ericcornelissen/bash-parser` ships no types. Only what ShellCommands.ts
 * reads is declared: the parser returns a plain tree of objects, each with
 * a `type`, that ShellCommands walks without trusting its shape.
 */
declare module "@ericcornelissen/bash-parser" {
  const parse: (source: string, options?: { readonly mode?: "posix" | "bash" }) => unknown
  export default parse
}
