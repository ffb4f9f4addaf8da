/** What the page's views share: how they are shown and kept live. */

/** The revisions a change event carries (a field is absent from an older server). */
export type Revisions = { readonly [store: string]: number | undefined }

/** A view behind the nav: its own element, shown for the addresses it matches. */
export interface View {
  readonly node: HTMLElement
  /** Does this view own the address `hash` (`#/runs/…`)? */
  readonly matches: (hash: string) => boolean
  /** The address is this view's: show it, and what the address names. */
  readonly show: (hash: string) => void
  readonly hide: () => void
  /**
   * A change event: refetch what is on screen if its store moved. `loop`:
   * whether a magi loop owns the home (undefined until known).
   */
  readonly changed: (revisions: Revisions, loop: boolean | undefined) => void
}

/**
 * A view built the first time its address is shown: most visits never leave
 * the questions, and building every view's frame held the first screen back.
 * Until then its node is an empty placeholder, and change events pass it by
 * (the view fetches what it shows when it is shown).
 */
export const lazyView = (matches: (hash: string) => boolean, make: () => View): View => {
  let built: View | undefined
  const placeholder = document.createElement("div")
  placeholder.hidden = true
  const view = () => {
    if (built === undefined) {
      built = make()
      placeholder.replaceWith(built.node)
    }
    return built
  }
  return {
    node: placeholder,
    matches,
    show: (hash) => view().show(hash),
    hide: () => built?.hide(),
    changed: (revisions, loop) => built?.changed(revisions, loop)
  }
}

/** A fetch that, asked again while running, runs exactly once more after it. */
export const coalesced = (load: () => Promise<void>) => {
  let inFlight: Promise<void> | undefined
  let again = false
  const run = (): Promise<void> => {
    if (inFlight !== undefined) {
      again = true
      return inFlight
    }
    inFlight = load().then(() => {
      inFlight = undefined
      if (again) {
        again = false
        void run()
      }
    })
    return inFlight
  }
  return run
}

export const message = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** A part of the address decoded, or undefined when it is malformed (a hand-typed `%`): the page must still open. */
export const decoded = (part: string): string | undefined => {
  try {
    return decodeURIComponent(part)
  } catch {
    return undefined
  }
}
