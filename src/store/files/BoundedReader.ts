/**
 * The fast path's port: reading one record file, or a folder's names, synchronously
 * and bounded, where the platform can (Node, through `LocalContext`). It is
 * apart so the context, the reads and the listings can all name it without
 * the entry that assembles them.
 */
import { Context, Either } from "effect"

/** Why a bounded read did not return the file's text. */
export type BoundedReadRefusal =
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "NotRegular"; readonly kind: string }
  | { readonly _tag: "TooBig"; readonly size: number }
  | { readonly _tag: "Failed"; readonly message: string }

/** A refusal as words, for an error message. */
export const refusalWords = (why: BoundedReadRefusal): string => {
  switch (why._tag) {
    case "NotFound":
      return "not found"
    case "NotRegular":
      return `it is ${why.kind}`
    case "TooBig":
      return `too big (${why.size} bytes)`
    case "Failed":
      return why.message
  }
}

/**
 * An optional fast path for reading one record file, synchronously and in
 * one step: open without blocking, check on the descriptor that it is a
 * regular file within `maxBytes`, read it. A listing reads thousands of
 * files, and doing the look and the read as separate effects doubles its
 * cost. `LocalContext` provides it on Node; without it (in memory, in tests)
 * the store looks (`stat`) and then reads, through `FileSystem`.
 */
export class BoundedReader extends Context.Tag("magi/BoundedReader")<
  BoundedReader,
  {
    readonly readString: (path: string, maxBytes: number) => Either.Either<string, BoundedReadRefusal>
    /**
     * A folder's names a batch at a time (`opendir`), never the whole folder
     * at once: the first move of a flat home lists 100,000 names, 1,000,000
     * at the goal, and a listing of them all, kept while they move, was the
     * largest part of what the move held. `undefined` when the folder is not
     * there. Names added or removed meanwhile may or may not be seen; the
     * others are seen once each.
     */
    readonly openNames: (path: string) => Either.Either<NamesCursor | undefined, BoundedReadRefusal>
  }
>() {}

/** An open folder read a batch at a time: `next` gives at most `max` names, none once all were given; `close` once done. */
export interface NamesCursor {
  readonly next: (max: number) => ReadonlyArray<string>
  readonly close: () => void
}
