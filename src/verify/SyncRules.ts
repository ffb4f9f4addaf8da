/**
 * What a sync to the base comes to, from what git said: pure, tested as a
 * table. A branch whose every commit's patch is already in the base
 * (`git cherry` marks them all `-`), or whose tree equals the base's after
 * the rebase, is `already_in_base`; a conflict left after the rebase-fix
 * rounds blocks, naming the paths; a base that moved while we rebased is
 * tried again, at most `SYNC_ATTEMPTS` times.
 */
export const SYNC_ATTEMPTS = 4

export interface Observed {
  /** `git cherry <base> <head>` lines: `+ sha` not in the base, `- sha` already there. */
  readonly cherry: ReadonlyArray<string>
  readonly treeEqualsBase: boolean
  /** The branch's head is an ancestor of the base's tip: merged already (`git cherry` then lists nothing). */
  readonly headInBase?: boolean
  readonly conflicts: ReadonlyArray<string>
  readonly baseMoved: boolean
  readonly attempts: number
}

export type Outcome =
  | { readonly _tag: "synced" }
  | { readonly _tag: "already_in_base"; readonly why: string }
  | { readonly _tag: "conflicted"; readonly paths: ReadonlyArray<string> }
  | { readonly _tag: "again" }
  | { readonly _tag: "moving"; readonly why: string }

export const outcome = (o: Observed): Outcome => {
  if (o.conflicts.length > 0) return { _tag: "conflicted", paths: o.conflicts }
  const lines = o.cherry.filter((l) => l.trim() !== "")
  if (lines.length > 0 && lines.every((l) => l.startsWith("-")))
    return { _tag: "already_in_base", why: "every commit of the branch is already in the base (same patch-id)" }
  if (o.headInBase === true) return { _tag: "already_in_base", why: "the branch's head is already in the base: it was merged" }
  if (o.treeEqualsBase) return { _tag: "already_in_base", why: "the branch's tree is the base's: its change is already there" }
  if (o.baseMoved) return o.attempts >= SYNC_ATTEMPTS ? { _tag: "moving", why: `the base moved during each of ${SYNC_ATTEMPTS} rebases` } : { _tag: "again" }
  return { _tag: "synced" }
}
